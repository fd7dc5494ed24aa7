//! The web console: one page and its script and style, embedded in the binary at build time
//! (no CDN, no npm, nothing fetched at run time). The page is a client of the JSON API.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | serving the embedded files |
//! | `index.html` | the page |
//! | `app.js` | the views: overview, topics, a topic (partitions, messages, configs), groups, a group |
//! | `style.css` | the look |

use axum::http::header;
use axum::response::IntoResponse;

/// Only this broker's own files and API: nothing else loads.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'";

fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
}

pub async fn page() -> impl IntoResponse {
    asset("text/html; charset=utf-8", include_str!("index.html"))
}

pub async fn script() -> impl IntoResponse {
    asset("text/javascript; charset=utf-8", include_str!("app.js"))
}

pub async fn style() -> impl IntoResponse {
    asset("text/css; charset=utf-8", include_str!("style.css"))
}
