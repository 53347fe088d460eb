//! Search and fetch against a local server speaking Exa's and SearXNG's wire and serving pages.

use std::time::Duration;

use quarry_testkit::{FakePage, FakeWeb, WebResult};
use quarry_web::{
    ExaSearch, FetchLimits, HostPolicy, PageFetcher, SearxngSearch, WebError, WebSearch,
};

const ARTICLE: &str = "<html><head><title>Acme Robotics - About</title></head><body>\
    <nav>Home | Products | Careers | Sign in</nav><main><article><h1>About Acme Robotics</h1>\
    <p>Acme Robotics was founded in 2011 in Lyon by Claire Martin. The company builds warehouse \
    robots and sells them to retailers across Europe and North America.</p>\
    <p>In 2025 Acme Robotics reported revenue of 48 million euros and employed 310 people in \
    three countries, most of them engineers working on navigation software.</p></article></main>\
    <footer>Cookie settings | Privacy | Copyright 2026</footer></body></html>";

fn results(web: &FakeWeb) -> Vec<WebResult> {
    vec![
        WebResult {
            url: web.url("/acme/about"),
            title: "About Acme Robotics".to_owned(),
            snippet: "Acme Robotics was founded in 2011 in Lyon".to_owned(),
        },
        WebResult {
            url: web.url("/acme/news"),
            title: "Acme news".to_owned(),
            snippet: "Acme opens an office in Boston".to_owned(),
        },
    ]
}

/// A fetcher that may read the fake web at 127.0.0.1 (a private address, allowed by name).
fn fetcher(limits: FetchLimits) -> PageFetcher {
    PageFetcher::new(limits, HostPolicy::allowing(["127.0.0.1"])).unwrap()
}

#[tokio::test]
async fn exa_and_searxng_give_the_same_hits_from_their_own_wire() {
    let web = FakeWeb::start();
    web.results(results(&web));
    let exa = ExaSearch::new(&web.exa_base_url(), web.exa_key(), Duration::from_secs(5)).unwrap();
    let searxng = SearxngSearch::new(&web.searxng_base_url(), Duration::from_secs(5)).unwrap();
    for provider in [&exa as &dyn WebSearch, &searxng] {
        let hits = provider.search("acme robotics founded", 1).await.unwrap();
        assert_eq!(hits.len(), 1, "{}", provider.provider());
        assert_eq!(hits[0].url, web.url("/acme/about"));
        assert_eq!(hits[0].title, "About Acme Robotics");
        assert_eq!(
            hits[0].snippet.as_deref(),
            Some("Acme Robotics was founded in 2011 in Lyon")
        );
    }
    let requests = web.requests();
    assert!(
        requests.contains(&"POST /exa/search".to_owned()),
        "{requests:?}"
    );
    assert!(
        requests.contains(&"GET /searxng/search?q=acme+robotics+founded&format=json".to_owned()),
        "{requests:?}"
    );
    // A wrong key is the provider's own error, said as such.
    let wrong = ExaSearch::new(&web.exa_base_url(), "nope", Duration::from_secs(5)).unwrap();
    let error = wrong.search("acme", 3).await.unwrap_err();
    assert!(
        matches!(&error, WebError::Search { provider: "exa", reason } if reason.contains("401")),
        "{error}"
    );
}

#[tokio::test]
async fn a_page_is_read_as_its_main_text_after_bounded_redirects() {
    let web = FakeWeb::start();
    web.page("/acme/about", FakePage::Html(ARTICLE.to_owned()))
        .page("/old-about", FakePage::Redirect("/acme/about".to_owned()))
        .page("/older-about", FakePage::Redirect(web.url("/old-about")))
        .page(
            "/notes.txt",
            FakePage::Text("Acme's fiscal year ends in March.".to_owned()),
        );
    let fetcher = fetcher(FetchLimits::default());

    let page = fetcher.fetch(&web.url("/older-about")).await.unwrap();
    assert_eq!(
        page.url,
        web.url("/acme/about"),
        "the final URL after two redirects"
    );
    assert_eq!(page.requested_url, web.url("/older-about"));
    assert_eq!(page.title, "Acme Robotics - About");
    assert!(
        page.text
            .contains("founded in 2011 in Lyon by Claire Martin"),
        "{}",
        page.text
    );
    assert!(
        page.text.contains("revenue of 48 million euros"),
        "{}",
        page.text
    );
    assert!(!page.text.contains("Cookie settings") && !page.text.contains("Sign in"));
    assert!(!page.truncated);
    assert!(chrono_like(&page.fetched_at), "{}", page.fetched_at);

    let text = fetcher.fetch(&web.url("/notes.txt")).await.unwrap();
    assert_eq!(text.text, "Acme's fiscal year ends in March.");

    let one_hop = fetcher_with(|limits| limits.max_redirects = 1);
    assert_eq!(
        one_hop.fetch(&web.url("/older-about")).await.unwrap_err(),
        WebError::TooManyRedirects(1)
    );
}

#[tokio::test]
async fn robots_txt_is_honoured_for_quarrybot() {
    let web = FakeWeb::start();
    web.robots("User-agent: *\nDisallow: /\n\nUser-agent: QuarryBot\nDisallow: /private/\n")
        .page("/private/salaries", FakePage::Html(ARTICLE.to_owned()))
        .page("/acme/about", FakePage::Html(ARTICLE.to_owned()))
        .page("/moved", FakePage::Redirect("/private/salaries".to_owned()));
    let fetcher = fetcher(FetchLimits::default());
    assert!(fetcher.fetch(&web.url("/acme/about")).await.is_ok());
    for path in ["/private/salaries", "/moved"] {
        let error = fetcher.fetch(&web.url(path)).await.unwrap_err();
        assert!(
            matches!(&error, WebError::RobotsDisallowed { url, .. } if url.ends_with("/private/salaries")),
            "{path}: {error}"
        );
    }
    let robots_reads = web
        .requests()
        .iter()
        .filter(|r| r.as_str() == "GET /robots.txt")
        .count();
    assert_eq!(robots_reads, 1, "robots.txt is read once per origin");
}

#[tokio::test]
async fn private_addresses_schemes_sizes_types_and_time_are_refused() {
    let web = FakeWeb::start();
    let port = web.url("").rsplit(':').next().unwrap().to_owned();
    web.page("/acme/about", FakePage::Html(ARTICLE.to_owned()))
        .page(
            "/to-localhost",
            FakePage::Redirect(format!("http://localhost:{port}/acme/about")),
        )
        .page(
            "/to-metadata",
            FakePage::Redirect("http://169.254.169.254/latest/meta-data".to_owned()),
        )
        .page(
            "/to-file",
            FakePage::Redirect("file:///etc/passwd".to_owned()),
        )
        .page(
            "/report.pdf",
            FakePage::Typed {
                content_type: "application/pdf".to_owned(),
                body: b"%PDF-1.7".to_vec(),
            },
        )
        .page("/big", FakePage::Text("x".repeat(10_000)))
        .page(
            "/slow",
            FakePage::Slow(
                Duration::from_secs(30),
                Box::new(FakePage::Text("late".to_owned())),
            ),
        );
    let fetcher = fetcher(FetchLimits::default());

    // The same server by a name that resolves to a private address: refused (only 127.0.0.1 is
    // allowed by name), directly and as a redirect's target.
    let direct = format!("http://localhost:{port}/acme/about");
    assert_eq!(
        fetcher.fetch(&direct).await.unwrap_err(),
        WebError::PrivateAddress("localhost".to_owned())
    );
    assert_eq!(
        fetcher.fetch(&web.url("/to-localhost")).await.unwrap_err(),
        WebError::PrivateAddress("localhost".to_owned())
    );
    assert_eq!(
        fetcher.fetch(&web.url("/to-metadata")).await.unwrap_err(),
        WebError::PrivateAddress("169.254.169.254".to_owned())
    );
    assert!(matches!(
        fetcher.fetch(&web.url("/to-file")).await.unwrap_err(),
        WebError::Scheme(_)
    ));
    assert!(matches!(
        fetcher.fetch("ftp://example.org/x").await.unwrap_err(),
        WebError::Scheme(_)
    ));
    assert!(matches!(
        fetcher.fetch("not a url").await.unwrap_err(),
        WebError::InvalidUrl(_)
    ));
    // Nothing allowed by name: even 127.0.0.1 is refused.
    let strict = PageFetcher::new(FetchLimits::default(), HostPolicy::default()).unwrap();
    assert_eq!(
        strict.fetch(&web.url("/acme/about")).await.unwrap_err(),
        WebError::PrivateAddress("127.0.0.1".to_owned())
    );

    assert!(matches!(
        fetcher.fetch(&web.url("/report.pdf")).await.unwrap_err(),
        WebError::ContentType { content_type, .. } if content_type == "application/pdf"
    ));
    assert!(matches!(
        fetcher.fetch(&web.url("/missing")).await.unwrap_err(),
        WebError::Status { status: 404, .. }
    ));
    let small = fetcher_with(|limits| limits.max_bytes = 1_000);
    let cut = small.fetch(&web.url("/big")).await.unwrap();
    assert!(cut.truncated);
    assert_eq!(cut.text.len(), 1_000);
    let impatient = fetcher_with(|limits| limits.timeout = Duration::from_millis(300));
    assert_eq!(
        impatient.fetch(&web.url("/slow")).await.unwrap_err(),
        WebError::Timeout(300)
    );
}

/// A page of nested `<div>`s held a core for minutes (Readability is quadratic in nesting) and,
/// read synchronously inside the async fetch, kept the timeout from firing: at the size cut it
/// is now read as plain text within the timeout, or cut by it, never a hang.
#[test]
fn a_deeply_nested_page_is_read_or_cut_by_the_timeout() {
    let web = FakeWeb::start();
    let limits = FetchLimits {
        timeout: Duration::from_secs(20),
        ..FetchLimits::default()
    };
    let depth = limits.max_bytes / "<div>".len();
    web.page(
        "/deep",
        FakePage::Html(format!(
            "<html><head><title>Deep</title></head><body><p>Acme Robotics was founded in 2011 \
             in Lyon.</p>{}deep inside{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        )),
    );
    let url = web.url("/deep");
    let fetcher = fetcher(limits);
    let (sent, received) = std::sync::mpsc::channel();
    // Its own thread and runtime: a fetch that blocked its runtime could not be timed out by it.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _ = sent.send(runtime.block_on(fetcher.fetch(&url)));
    });
    let read = received
        .recv_timeout(Duration::from_secs(120))
        .expect("the fetch ends (within its 20 s timeout), it does not hang");
    match read {
        Ok(page) => {
            assert!(page.truncated, "the page is longer than the size cut");
            assert_eq!(page.title, "Deep");
            assert!(
                page.text
                    .contains("Acme Robotics was founded in 2011 in Lyon."),
                "{}",
                page.text
            );
        }
        Err(error) => assert_eq!(error, WebError::Timeout(20_000)),
    }
}

/// Pages were decoded as UTF-8 whatever they declared: ISO-8859-1 and Shift_JIS came out
/// garbled. The `Content-Type` charset is used, else a `<meta>` declaration.
#[tokio::test]
async fn a_page_is_decoded_by_its_declared_charset() {
    let web = FakeWeb::start();
    let latin1 = ARTICLE
        .replace("Acme Robotics - About", "Le caf\u{e9} Acme")
        .replace("founded in 2011", "founded in 2011 as a caf\u{e9}");
    let (latin1, _, _) = encoding_rs::WINDOWS_1252.encode(&latin1);
    assert!(latin1.contains(&0xE9), "é as one byte");
    let japanese = ARTICLE
        .replace(
            "<head>",
            "<head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=Shift_JIS\">",
        )
        .replace("Acme Robotics - About", "Acme \u{6771}\u{4eac}")
        .replace("in Lyon", "in \u{6771}\u{4eac}");
    let (shift_jis, _, _) = encoding_rs::SHIFT_JIS.encode(&japanese);
    web.page(
        "/latin1",
        FakePage::Typed {
            content_type: "text/html; charset=ISO-8859-1".to_owned(),
            body: latin1.into_owned(),
        },
    )
    .page(
        "/shift-jis",
        FakePage::Typed {
            content_type: "text/html".to_owned(),
            body: shift_jis.into_owned(),
        },
    )
    .page(
        "/notes.txt",
        FakePage::Typed {
            content_type: "text/plain; charset=iso-8859-1".to_owned(),
            body: b"Caf\xe9 cr\xe8me".to_vec(),
        },
    );
    let fetcher = fetcher(FetchLimits::default());

    let page = fetcher.fetch(&web.url("/latin1")).await.unwrap();
    assert_eq!(page.title, "Le caf\u{e9} Acme");
    assert!(
        page.text.contains("as a caf\u{e9} in Lyon"),
        "{}",
        page.text
    );
    let page = fetcher.fetch(&web.url("/shift-jis")).await.unwrap();
    assert_eq!(page.title, "Acme \u{6771}\u{4eac}");
    assert!(
        page.text
            .contains("in 2011 in \u{6771}\u{4eac} by Claire Martin"),
        "{}",
        page.text
    );
    let text = fetcher.fetch(&web.url("/notes.txt")).await.unwrap();
    assert_eq!(text.text, "Caf\u{e9} cr\u{e8}me");
}

/// `https://user:secret@host/…` was kept as the page's URL, so stored and cited with the
/// secret: the credentials are sent, but no URL kept or said names them.
#[tokio::test]
async fn credentials_in_a_url_are_not_kept() {
    let web = FakeWeb::start();
    web.page("/acme/about", FakePage::Html(ARTICLE.to_owned()))
        .page("/moved", FakePage::Redirect("/acme/about".to_owned()));
    let with_secret = |path: &str| web.url(path).replace("http://", "http://user:secret@");
    let fetcher = fetcher(FetchLimits::default());
    assert_eq!(
        PageFetcher::shown_url(&with_secret("/moved")),
        web.url("/moved")
    );
    let page = fetcher.fetch(&with_secret("/moved")).await.unwrap();
    assert_eq!(page.requested_url, web.url("/moved"));
    assert_eq!(page.url, web.url("/acme/about"));
    assert!(page.text.contains("founded in 2011"), "{}", page.text);
    let error = fetcher.fetch(&with_secret("/missing")).await.unwrap_err();
    assert_eq!(
        error,
        WebError::Status {
            url: web.url("/missing"),
            status: 404
        }
    );
}

/// A host that cannot be reached was reported as "robots.txt … disallows" (the failed read of
/// robots.txt disallowed everything): the fetch now says why the host could not be reached.
#[tokio::test]
async fn an_unreachable_host_or_a_tls_failure_is_not_blamed_on_robots_txt() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let fetcher = fetcher(FetchLimits::default());
    let error = fetcher
        .fetch(&format!("http://127.0.0.1:{port}/about"))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, WebError::Request { reason, .. }
            if reason.to_lowercase().contains("connect")),
        "{error}"
    );
    // TLS to a server that speaks plain HTTP: the handshake fails.
    let web = FakeWeb::start();
    web.page("/acme/about", FakePage::Html(ARTICLE.to_owned()));
    let tls = web.url("/acme/about").replace("http://", "https://");
    let error = fetcher.fetch(&tls).await.unwrap_err();
    assert!(matches!(&error, WebError::Request { .. }), "{error}");
    assert!(fetcher.fetch(&web.url("/acme/about")).await.is_ok());
}

fn fetcher_with(change: impl FnOnce(&mut FetchLimits)) -> PageFetcher {
    let mut limits = FetchLimits::default();
    change(&mut limits);
    fetcher(limits)
}

/// `2026-11-27T14:00:00Z`: an RFC 3339 UTC time to the second.
fn chrono_like(text: &str) -> bool {
    text.len() == 20 && text.ends_with('Z') && text.as_bytes()[10] == b'T'
}
