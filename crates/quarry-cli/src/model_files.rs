//! `quarry model list | pull | rm | path`: the GGUF models installed for `local:` use, in the
//! model directory ([`models_dir`]), and the embedded default a command falls back to when no
//! model is chosen ([`default_local_model`]). Nothing downloads at run time except `pull`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use quarry_core::ErrorCode;
use quarry_llm::model_download::{DownloadRequest, download, install, part_path};

use crate::args::{ModelCommand, PullArgs};
use crate::config::env;
use crate::failure::Failure;
use crate::table::{print_json, print_table};

/// The name an installed model is known by when none is given to `pull`, and the one a command
/// with no model chosen prefers.
pub const DEFAULT_NAME: &str = "default";

pub fn run(command: ModelCommand) -> Result<ExitCode, Failure> {
    match command {
        ModelCommand::List { output } => {
            let models = installed()?;
            // A file whose header cannot be read is still listed, with blanks.
            let facts: Vec<(String, String)> = models
                .iter()
                .map(|(_, path, _)| {
                    quarry_llm::local::describe(path).map_or_else(
                        |_| (String::new(), String::new()),
                        |facts| (facts.architecture, facts.quantization),
                    )
                })
                .collect();
            if output.json {
                let listed: Vec<serde_json::Value> = models
                    .iter()
                    .zip(&facts)
                    .map(|((name, path, bytes), (architecture, quantization))| {
                        serde_json::json!({
                            "name": name,
                            "path": path,
                            "bytes": bytes,
                            "architecture": architecture,
                            "quantization": quantization,
                        })
                    })
                    .collect();
                return print_json(&listed);
            }
            if models.is_empty() {
                eprintln!(
                    "no model installed in {} (quarry model pull OWNER/REPO --file MODEL.gguf)",
                    models_dir().display()
                );
            }
            let rows = models
                .iter()
                .zip(facts)
                .map(|((name, path, bytes), (architecture, quantization))| {
                    vec![
                        name.clone(),
                        architecture,
                        quantization,
                        format!("{:.1} MB", *bytes as f64 / 1e6),
                        path.display().to_string(),
                    ]
                })
                .collect();
            print_table(
                &["name", "architecture", "quantization", "size", "path"],
                rows,
            );
            Ok(ExitCode::SUCCESS)
        }
        ModelCommand::Pull(args) => pull(args),
        ModelCommand::Rm { name } => {
            let path = installed_path(&name)?;
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
            let _ = std::fs::remove_file(part_path(&path));
            println!("removed {}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        ModelCommand::Path { name } => {
            println!("{}", installed_path(&name)?.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Installed models: (name, path, bytes), by name.
fn installed() -> Result<Vec<(String, PathBuf, u64)>, Failure> {
    let dir = models_dir();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            return Err(anyhow::Error::from(error)
                .context(format!("reading {}", dir.display()))
                .into());
        }
    };
    let mut models: Vec<(String, PathBuf, u64)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let name = path
                .file_name()?
                .to_str()?
                .strip_suffix(".gguf")?
                .to_owned();
            let bytes = entry.metadata().ok()?.len();
            Some((name, path, bytes))
        })
        .collect();
    models.sort();
    Ok(models)
}

fn installed_path(name: &str) -> Result<PathBuf, Failure> {
    let path = models_dir().join(format!("{}.gguf", checked_name(name)?));
    if path.is_file() {
        Ok(path)
    } else {
        Err(Failure::coded(
            ErrorCode::NotFound,
            format!(
                "no model '{name}' in {} (quarry model list shows what is installed)",
                models_dir().display()
            ),
        ))
    }
}

/// A model name is a file name: letters, digits, `.`, `_` and `-`.
fn checked_name(name: &str) -> Result<&str, Failure> {
    let fine = !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if fine {
        Ok(name)
    } else {
        Err(Failure::coded(
            ErrorCode::InvalidArguments,
            format!("'{name}' is not a model name: use letters, digits, '.', '_' and '-'"),
        ))
    }
}

/// The model a command uses when none is chosen: the installed model named `default`, else the
/// only one installed. `None` when none is installed or several are and none is the default.
pub fn default_local_model() -> Option<PathBuf> {
    let models = installed().ok()?;
    if let Some((_, path, _)) = models.iter().find(|(name, _, _)| name == DEFAULT_NAME) {
        return Some(path.clone());
    }
    match models.as_slice() {
        [(_, path, _)] => Some(path.clone()),
        _ => None,
    }
}

/// Where `pull` fetches `source` from: a URL as it is, `OWNER/REPO` with `--file` as the hub's
/// download URL (`$HF_ENDPOINT`, default https://huggingface.co), or a local file.
enum Source {
    Url(String),
    File(PathBuf),
}

fn source_of(args: &PullArgs) -> Result<Source, Failure> {
    let source = args.source.trim();
    if source.starts_with("http://") || source.starts_with("https://") {
        return Ok(Source::Url(source.to_owned()));
    }
    if Path::new(source).is_file() {
        return Ok(Source::File(PathBuf::from(source)));
    }
    let repository = source.split('/').filter(|part| !part.is_empty()).count() == 2
        && !source.starts_with('/')
        && !source.starts_with('.');
    match (&args.file, repository) {
        (Some(file), true) => {
            let endpoint =
                env("HF_ENDPOINT").unwrap_or_else(|| "https://huggingface.co".to_owned());
            Ok(Source::Url(format!(
                "{}/{source}/resolve/{}/{file}",
                endpoint.trim_end_matches('/'),
                args.revision
            )))
        }
        (None, true) => Err(Failure::coded(
            ErrorCode::Usage,
            format!("'{source}' is a repository: name its GGUF file with --file MODEL.gguf"),
        )),
        _ => Err(Failure::coded(
            ErrorCode::Usage,
            format!("'{source}' is neither an OWNER/REPO (with --file), a URL nor a readable file"),
        )),
    }
}

/// The file name `pull` keeps: `--name`, else the source's file name without `.gguf`.
fn name_of(args: &PullArgs, source: &Source) -> Result<String, Failure> {
    if let Some(name) = &args.name {
        return Ok(checked_name(name)?.to_owned());
    }
    let file = match source {
        Source::Url(url) => url
            .split(['?', '#'])
            .next()
            .and_then(|path| path.rsplit('/').next())
            .unwrap_or_default()
            .to_owned(),
        Source::File(path) => path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let stem = file.strip_suffix(".gguf").unwrap_or(&file).to_owned();
    checked_name(&stem).map(str::to_owned).map_err(|_| {
        Failure::coded(
            ErrorCode::Usage,
            format!("cannot name the model after '{file}': give --name NAME"),
        )
    })
}

fn pull(args: PullArgs) -> Result<ExitCode, Failure> {
    let source = source_of(&args)?;
    let name = name_of(&args, &source)?;
    let destination = models_dir().join(format!("{name}.gguf"));
    if destination.exists() && !args.force {
        return Err(Failure::coded(
            ErrorCode::Conflict,
            format!(
                "model '{name}' is installed already at {} (--force replaces it)",
                destination.display()
            ),
        ));
    }
    let url = match source {
        Source::Url(url) => url,
        Source::File(path) => {
            // A local file is fetched like any other, so it is checked the same way.
            let absolute = path.canonicalize().context("reading the model file")?;
            format!("file://{}", absolute.display())
        }
    };
    // Every check is made on the `.part` beside the destination before one rename puts it in
    // place, so a failed pull (`--force` included) leaves an installed model as it was.
    let unchanged = |failure: String| {
        let kept = if destination.exists() {
            format!(" (the installed '{name}' is unchanged)")
        } else {
            String::new()
        };
        Failure::coded(ErrorCode::DownloadFailed, format!("{failure}{kept}"))
    };
    let downloaded = if let Some(path) = url.strip_prefix("file://") {
        copy_local(Path::new(path), &destination, args.sha256.as_deref())
            .map_err(|failure| unchanged(format!("{failure:#}")))?
    } else {
        // The URL (or hub) named here may be on this network; where it redirects is checked.
        let request = DownloadRequest {
            hosts: crate::outbound::outbound_policy().also_allowing(&url),
            url: url.clone(),
            destination: destination.clone(),
            sha256: args.sha256.clone(),
        };
        let progress = crate::progress::bytes(&format!("pulling {name}"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let outcome = runtime.block_on(download(&request, &mut |done, total| {
            if let Some(total) = total {
                progress.set_length(total);
            }
            progress.set_position(done);
        }));
        progress.finish_and_clear();
        let downloaded = outcome.map_err(|error| unchanged(error.to_string()))?;
        if downloaded.resumed_from > 0 {
            eprintln!("resumed at byte {}", downloaded.resumed_from);
        }
        (downloaded.sha256, downloaded.verified)
    };
    let (sha256, verified) = downloaded;
    eprintln!(
        "installed '{name}' (sha256 {sha256}{})",
        if verified {
            ", verified"
        } else {
            ", no checksum to verify against"
        }
    );
    println!("{}", destination.display());
    Ok(ExitCode::SUCCESS)
}

/// Copies a local model file in, checking `sha256` when given and that it is a GGUF.
fn copy_local(
    path: &Path,
    destination: &Path,
    sha256: Option<&str>,
) -> Result<(String, bool), anyhow::Error> {
    if let Some(parent) = destination.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let part = part_path(destination);
    std::fs::copy(path, &part).with_context(|| format!("copying {}", path.display()))?;
    let digest = quarry_llm::model_download::file_sha256(&part)
        .with_context(|| format!("reading {}", part.display()))?;
    if let Some(expected) = sha256
        && !expected.eq_ignore_ascii_case(&digest)
    {
        let _ = std::fs::remove_file(&part);
        anyhow::bail!("the file's SHA-256 is {digest}, not {expected}; nothing was installed");
    }
    install(&part, destination, &path.display().to_string())?;
    Ok((digest, sha256.is_some()))
}

/// Where installed GGUF models live: `QUARRY_MODELS_DIR`, else `$XDG_DATA_HOME/quarry/models`,
/// else `~/.local/share/quarry/models`.
pub fn models_dir() -> std::path::PathBuf {
    quarry_llm::models_dir_from(env)
}
