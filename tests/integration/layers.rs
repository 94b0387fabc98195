//! The layers of the crate, checked on its source: kernel folders use `bevy::math` at most (no ECS), and no two
//! source files import each other, directly or around a circle (re-exports followed to where an item lives).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The kernel folders and files: pure functions over slices, no `Component`, `Query`, `Res`, systems.
const KERNELS: [&str; 8] = [
    "sim/constraints/",
    "sim/collide/",
    "sim/selfcollide/",
    "sim/mesh/",
    "sim/tearing.rs",
    "sim/damping.rs",
    "sim/integrate.rs",
    "sim/wind.rs",
];

/// Words that mean the ECS.
const ECS_WORDS: [&str; 9] =
    ["Component", "Resource", "Query<", "Res<", "ResMut<", "Commands", "Entity", "bevy::prelude", "bevy::ecs"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's code before its unit tests, comments removed.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// `a/b.rs` or `a/b/mod.rs` → ["a", "b"]; `lib.rs` → [].
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Every `use` statement of `code` expanded to full paths (brace groups flattened), with whether it is `pub`.
fn uses(code: &str) -> Vec<(bool, Vec<String>)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = &rest[..at];
        let starts_statement = before.trim_end().ends_with([';', '}', '{', ']']) || before.trim_end().is_empty();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let prefix = before[line_start..].trim();
        let is_pub = prefix.starts_with("pub");
        rest = &rest[at + 4..];
        if !(starts_statement || prefix == "pub" || prefix.starts_with("pub(")) {
            continue;
        }
        let Some(end) = rest.find(';') else { break };
        let tree: String = rest[..end].chars().filter(|c| !c.is_whitespace()).collect();
        for path in expand(&tree) {
            out.push((is_pub, path));
        }
        rest = &rest[end..];
    }
    out
}

/// `a::{b, c::{d, e}}` → [a::b, a::c::d, a::c::e]; `x as y` keeps x.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or_default().split("as").next().unwrap_or_default();
        return vec![path.split("::").filter(|s| !s.is_empty()).map(String::from).collect()];
    };
    let head: Vec<String> = tree[..open].split("::").filter(|s| !s.is_empty()).map(String::from).collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(expand)
        .map(|tail| head.iter().cloned().chain(tail).collect())
        .collect()
}

/// A `use` path of module `from` as a path from the crate root.
fn absolute(from: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut module: Vec<String> = from.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            module.clear();
            rest = &rest[1..];
        }
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                module.pop();
                rest = &rest[1..];
            }
        }
        Some("self") => rest = &rest[1..],
        _ => return None, // another crate
    }
    Some(module.into_iter().chain(rest.iter().filter(|s| *s != "self").cloned()).collect())
}

struct Crate {
    /// module path → file
    files: BTreeMap<Vec<String>, PathBuf>,
    /// module path → its uses (pub?, absolute path)
    uses: BTreeMap<Vec<String>, Vec<(bool, Vec<String>)>>,
}

impl Crate {
    fn read() -> Self {
        let mut paths = Vec::new();
        rust_files(&src(), &mut paths);
        paths.retain(|p| p.file_name().is_some_and(|n| n != "main.rs"));
        let mut files = BTreeMap::new();
        let mut all_uses = BTreeMap::new();
        for path in paths {
            let module = module_of(&path);
            let resolved =
                uses(&code(&path)).into_iter().filter_map(|(p, u)| absolute(&module, &u).map(|a| (p, a))).collect();
            all_uses.insert(module.clone(), resolved);
            files.insert(module, path);
        }
        Self { files, uses: all_uses }
    }

    /// The module where the item at `path` is defined, following `pub use` re-exports.
    fn home(&self, path: &[String], depth: usize) -> Option<Vec<String>> {
        let module = (0..=path.len()).rev().map(|n| &path[..n]).find(|m| self.files.contains_key(*m))?.to_vec();
        if depth < 8
            && let Some(item) = path.get(module.len())
            && let Some(target) =
                self.uses[&module].iter().find(|(public, u)| *public && u.last() == Some(item)).map(|(_, u)| u.clone())
        {
            return self.home(&target, depth + 1);
        }
        Some(module)
    }

    /// Which modules each module imports from (itself, its ancestors' re-export hubs resolved away).
    fn graph(&self) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        let mut graph = BTreeMap::new();
        for (module, uses) in &self.uses {
            let targets: BTreeSet<Vec<String>> = uses
                .iter()
                .filter_map(|(_, u)| self.home(u, 0))
                .filter(|home| home != module && !home.starts_with(module))
                .collect();
            graph.insert(module.clone(), targets);
        }
        graph
    }
}

fn name(module: &[String]) -> String {
    if module.is_empty() { "crate".into() } else { module.join("::") }
}

/// One circle of `graph`, if any (depth-first search for a back edge).
fn find_circle(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    fn visit(
        node: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|m| m == next).unwrap_or(0);
                    return Some(stack[from..].iter().chain([next]).map(|m| name(m)).collect());
                }
                0 => {
                    if let Some(circle) = visit(next, graph, state, stack) {
                        return Some(circle);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node).copied().unwrap_or(0) == 0
            && let Some(circle) = visit(node, graph, &mut state, &mut Vec::new())
        {
            return Some(circle);
        }
    }
    None
}

#[test]
fn kernel_folders_use_bevy_math_at_most() {
    let mut found = Vec::new();
    let krate = Crate::read();
    for (module, path) in &krate.files {
        let rel = path.strip_prefix(src()).unwrap().to_string_lossy().replace('\\', "/");
        if !KERNELS.iter().any(|k| rel.starts_with(k)) {
            continue;
        }
        let code = code(path);
        for word in ECS_WORDS {
            if code.contains(word) {
                found.push(format!("{rel}: `{word}`"));
            }
        }
        for line in code.lines().filter(|l| l.contains("bevy::")) {
            let ok = line.split("bevy::").skip(1).all(|after| after.starts_with("math"));
            if !ok {
                found.push(format!("{rel} ({}): {}", name(module), line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "ECS in kernel folders:\n{}", found.join("\n"));
}

#[test]
fn no_two_modules_import_each_other() {
    let graph = Crate::read().graph();
    assert!(graph.len() > 40, "the source was not read: {} modules", graph.len());
    if let Some(circle) = find_circle(&graph) {
        panic!("import circle: {}", circle.join(" → "));
    }
}

#[test]
fn the_circle_finder_finds_circles() {
    let m = |s: &str| vec![s.to_string()];
    let mut graph = BTreeMap::from([(m("a"), BTreeSet::from([m("b")])), (m("b"), BTreeSet::from([m("c")]))]);
    graph.insert(m("c"), BTreeSet::new());
    assert_eq!(find_circle(&graph), None);
    graph.insert(m("c"), BTreeSet::from([m("a")]));
    assert_eq!(find_circle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    let tree = expand("super::{cloth::{A,B},c}");
    assert_eq!(tree.len(), 3);
    assert_eq!(
        absolute(&["sim".into(), "stages".into()], &tree[0]),
        Some(vec!["sim".into(), "cloth".into(), "A".into()])
    );
}
