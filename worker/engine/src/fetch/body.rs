//! Reading a response body within the request's byte limit.

use url::Url;

use super::error::classify_reqwest;
use super::FetchError;

pub(super) async fn read_capped(
    mut response: reqwest::Response,
    max_bytes: usize,
    url: &Url,
) -> Result<(Vec<u8>, bool), FetchError> {
    let hint = response.content_length().unwrap_or(0) as usize;
    let mut body = Vec::with_capacity(hint.min(max_bytes).min(1024 * 1024));
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| classify_reqwest(e, url))?
    {
        let room = max_bytes - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}
