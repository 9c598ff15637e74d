//! The store embeds its SQL migrations (`sqlx::migrate!`); cargo must
//! rebuild when one is added, which it does not notice by itself.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
