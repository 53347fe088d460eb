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

fn fetcher_with(change: impl FnOnce(&mut FetchLimits)) -> PageFetcher {
    let mut limits = FetchLimits::default();
    change(&mut limits);
    fetcher(limits)
}

/// `2026-11-27T14:00:00Z`: an RFC 3339 UTC time to the second.
fn chrono_like(text: &str) -> bool {
    text.len() == 20 && text.ends_with('Z') && text.as_bytes()[10] == b'T'
}
