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
