//! Black-box tests live in `tests/tests/`; this library holds nothing.
