//! A SQLite database path in a folder of its own, the folder removed when the value is dropped
//! (on a panic too), so test runs leave nothing in the temporary directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `…/quarry-<name>-<pid>-<n>/quarry.db`; derefs to the database's path.
#[derive(Debug)]
pub struct TempDb {
    dir: PathBuf,
    path: PathBuf,
}

impl TempDb {
    /// A fresh folder named after `name`, this process and a counter.
    pub fn new(name: &str) -> TempDb {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "quarry-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the temporary folder can be made");
        TempDb {
            path: dir.join("quarry.db"),
            dir,
        }
    }

    /// The database path as the store's URL.
    pub fn url(&self) -> &str {
        self.path.to_str().expect("temporary paths are UTF-8")
    }
}

impl std::ops::Deref for TempDb {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
