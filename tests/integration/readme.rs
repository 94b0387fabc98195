//! The README stays true to the code it shows: its library section holds `examples/minimal.rs` as it is.

#[test]
fn the_readme_shows_the_minimal_example_as_it_is() {
    let readme = include_str!("../../README.md");
    let example = include_str!("../../examples/minimal.rs");
    let body: Vec<&str> = example.lines().filter(|l| !l.starts_with("//!")).collect();
    let body = body.join("\n");
    let shown = format!("```rust\n{}\n```", body.trim_matches('\n'));
    assert!(
        readme.contains(&shown),
        "README.md: the code under \"Use drape in your own Bevy app\" is not examples/minimal.rs"
    );
    assert!(example.lines().count() <= 80, "examples/minimal.rs should stay within 80 lines");
}

/// README.md, CHANGELOG.md and every page of docs/.
fn pages() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    let docs = std::fs::read_dir(root.join("docs")).unwrap().flatten().map(|e| e.path());
    files.extend(docs.filter(|p| p.extension().is_some_and(|e| e == "md")));
    files.into_iter().map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap())).collect()
}

/// Words that look like a commit hash: 7 to 40 hex digits with at least one digit and one letter.
fn hashes(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| (7..=40).contains(&w.len()) && w.chars().all(|c| c.is_ascii_hexdigit()))
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()) && w.chars().any(|c| c.is_ascii_alphabetic()))
        .map(String::from)
        .collect()
}

#[test]
fn the_readme_is_a_front_door_and_the_docs_cite_no_commits() {
    let readme = include_str!("../../README.md");
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines; the front door keeps to 250 (history: CHANGELOG.md)");
    for (page, text) in pages() {
        let found = hashes(&text);
        assert!(found.is_empty(), "{page} cites commits (the history belongs in git and CHANGELOG.md): {found:?}");
    }
    assert_eq!(hashes("at e392777 (3.93 ms), with room at 44c3d26; 1,464 triangles; deadbeef"), ["e392777", "44c3d26"]);
}

#[test]
fn the_readme_lists_every_shipped_preset_and_no_other() {
    let readme = include_str!("../../README.md");
    let shipped = drape::scene::preset::names();
    assert!(shipped.len() >= 10, "the presets were not found: {shipped:?}");
    let section = readme.split("\n## Presets").nth(1).expect("README.md has a Presets section");
    let section = section.split("\n## ").next().unwrap_or_default();
    // the first column of the table under the header `| preset |`, to its end
    let table = section.lines().skip_while(|l| !l.starts_with("| preset |")).take_while(|l| l.starts_with('|'));
    let listed: Vec<String> =
        table.filter_map(|l| l.strip_prefix("| `").and_then(|rest| rest.split('`').next())).map(String::from).collect();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(sorted, shipped, "README's preset table against assets/presets/");
}
