//! The allocator's settings for the binaries that crawl (`webdata`,
//! `webdata-worker`; both use mimalloc as their global allocator).

/// mimalloc's option index of `purge_delay` (`mi_option_e` in mimalloc.h,
/// v2 and v3; libmimalloc-sys names no constant for it).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// How long mimalloc keeps freed memory before it returns it to the OS.
/// Its default is 1 s: a crawl frees and allocates its page buffers all
/// the time, so memory went back to the OS and was faulted in again, zeroed
/// 2 MB at a time (transparent huge pages) — 6% of a crawl's CPU in the
/// kernel (perf, 2,469-page docs site). With 10 s the memory is reused while
/// a crawl runs and still goes back once the process is idle; interleaved
/// runs in docs/benchmarks.md ("Issue 24, session 20").
pub const PURGE_DELAY_MS: std::ffi::c_long = 10_000;

/// Sets mimalloc's purge delay to [`PURGE_DELAY_MS`] unless the operator
/// chose one in the environment (`MIMALLOC_PURGE_DELAY`, or its old name
/// `MIMALLOC_RESET_DELAY`; mimalloc reads them itself, in any case, when
/// the process loads, so `mi_option_set_default` would come too late).
/// Call it first thing in `main`, before any other thread exists.
pub fn tune() {
    let chosen = std::env::vars_os().any(|(k, _)| {
        k.to_str().is_some_and(|k| {
            k.eq_ignore_ascii_case("MIMALLOC_PURGE_DELAY")
                || k.eq_ignore_ascii_case("MIMALLOC_RESET_DELAY")
        })
    });
    if !chosen {
        // SAFETY: a plain store of an integer in mimalloc's option table
        // (it is read at each purge). Called before the process starts
        // other threads, so nothing reads it concurrently.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
}

#[cfg(test)]
mod tests {
    /// The index is mimalloc's `purge_delay`: setting it through the index
    /// reads back, and the documented default (1000 ms in v3) is what it held.
    #[test]
    fn the_purge_delay_index_is_the_purge_delay() {
        // SAFETY: reads and writes of mimalloc's option table.
        let before = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        let chosen = std::env::var_os("MIMALLOC_PURGE_DELAY").is_some()
            || std::env::var_os("MIMALLOC_RESET_DELAY").is_some();
        if !chosen {
            assert_eq!(before, 1000);
        }
        super::tune();
        let after = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        if !chosen {
            assert_eq!(after, super::PURGE_DELAY_MS);
        } else {
            assert_eq!(after, before);
        }
    }
}
