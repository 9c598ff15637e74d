//! `crds/` and the chart's `crds/` hold exactly what `webdata-operator crd`
//! generates from the Rust types; this fails when they drift.

#[test]
fn generated_crds_match_the_committed_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for dir in ["crds", "charts/webdata/crds"] {
        for (file, body) in webdata_operator::crd::crd_yaml() {
            let path = root.join(dir).join(file);
            let committed = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                committed == body,
                "{} differs from the generated CRD: run `cargo run -p webdata-operator -- crd --out-dir crds` and copy crds/*.yaml to charts/webdata/crds/",
                path.display()
            );
        }
        let count = std::fs::read_dir(root.join(dir))
            .expect("dir")
            .filter(|e| {
                e.as_ref()
                    .map(|e| e.path().extension().is_some_and(|x| x == "yaml"))
                    .unwrap_or(false)
            })
            .count();
        assert_eq!(count, 3, "{dir} holds only the three CRDs");
    }
}
