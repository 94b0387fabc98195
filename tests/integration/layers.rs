//! The layers of the crate, checked on its source: kernel folders use `bevy::math` at most (no ECS) and import
//! nothing above them, and no two source files import each other, directly or around a circle — counting `use`
//! statements, inline paths in code (`super::a::B`, `crate::a::f(…)`) and `pub use` re-exports (relative ones
//! such as `pub use params::SimParams` too), each followed to the module where the item lives. The library
//! (`src/`) and the demo binary (`src/bin/drape/`) are checked as the two crates they are.

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

/// The helpers below the kernels, which kernels may import (each imports only helpers of this list and kernels):
/// the compute pool's chunking and its worker crew, the four-lane SIMD types, the parameters' documented ranges
/// and the file-format checks of them.
const KERNEL_INPUTS: [&str; 5] = ["sim::parallel", "sim::crew", "sim::lanes", "sim::knobs", "validate"];

/// Words that mean the ECS.
const ECS_WORDS: [&str; 9] =
    ["Component", "Resource", "Query<", "Res<", "ResMut<", "Commands", "Entity", "bevy::prelude", "bevy::ecs"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The demo binary's root folder.
fn bin() -> PathBuf {
    src().join("bin/drape")
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

/// `a/b.rs` or `a/b/mod.rs` under `root` → ["a", "b"]; the root file `lib.rs` or `main.rs` → [].
fn module_of(root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let root_file = parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main");
    if root_file || parts.last().map(String::as_str) == Some("mod") {
        parts.pop();
    }
    parts
}

/// Every path written inline in `code` that starts at `crate`, `super` or `self` (`super::throws::launch`,
/// `crate::sim::ClothStep` in an expression, a type or a string attribute), as written.
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for head in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(head).map(|i| i + from) {
            from = at + head.len();
            let word_before = at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
            if word_before {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |i| i + at);
            let path: Vec<String> = code[at..end].split("::").filter(|s| !s.is_empty()).map(String::from).collect();
            if path.len() > 1 {
                out.push(path);
            }
        }
    }
    out
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

/// A `use` path of module `from` as a path from the crate root; `children` are `from`'s child modules, which a
/// path may name without `self::` (`pub use params::SimParams`).
fn absolute(from: &[String], path: &[String], children: &BTreeSet<String>) -> Option<Vec<String>> {
    let mut module: Vec<String> = from.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some(child) if children.contains(child) => {}
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
    /// The library: every file under `src/` but the demo binary's.
    fn library() -> Self {
        Self::read(&src(), &[bin()])
    }

    /// The demo binary: `src/bin/drape/`, its root `main.rs`.
    fn demo() -> Self {
        Self::read(&bin(), &[])
    }

    fn read(root: &Path, skip: &[PathBuf]) -> Self {
        let mut paths = Vec::new();
        rust_files(root, &mut paths);
        paths.retain(|p| !skip.iter().any(|s| p.starts_with(s)));
        let modules: BTreeSet<Vec<String>> = paths.iter().map(|p| module_of(root, p)).collect();
        let mut files = BTreeMap::new();
        let mut all_uses = BTreeMap::new();
        for path in paths {
            let module = module_of(root, &path);
            let children: BTreeSet<String> = modules
                .iter()
                .filter(|m| m.len() == module.len() + 1 && m.starts_with(&module))
                .filter_map(|m| m.last().cloned())
                .collect();
            let code = code(&path);
            let written = uses(&code).into_iter().chain(inline_paths(&code).into_iter().map(|p| (false, p)));
            let resolved = written.filter_map(|(p, u)| absolute(&module, &u, &children).map(|a| (p, a))).collect();
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

/// Every circle of `graph`: its strongly connected components of more than one module, each sorted.
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    // reachability by depth-first search from each module: a and b share a component iff each reaches the other
    let reach = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(m) = stack.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, from_m) in &reached {
        let mut component: Vec<String> = from_m
            .iter()
            .filter(|other| *other != *m && reached.get(other).is_some_and(|r| r.contains(*m)))
            .map(|other| name(other))
            .collect();
        if !component.is_empty() {
            component.push(name(m));
            component.sort();
            found.insert(component);
        }
    }
    found.into_iter().collect()
}

#[test]
fn kernel_folders_use_bevy_math_at_most() {
    let mut found = Vec::new();
    let krate = Crate::library();
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
    for (krate, graph, least) in [("library", Crate::library().graph(), 40), ("demo", Crate::demo().graph(), 10)] {
        assert!(graph.len() > least, "the {krate}'s source was not read: {} modules", graph.len());
        let all = circles(&graph);
        let listed: Vec<String> = all.iter().map(|c| c.join(" ↔ ")).collect();
        let first = find_circle(&graph).map(|c| c.join(" → ")).unwrap_or_default();
        assert_eq!(
            all.len(),
            0,
            "{} import circles in the {krate}: {}\nfor example {first}",
            all.len(),
            listed.join("; ")
        );
    }
}

#[test]
fn kernels_import_nothing_above_them() {
    let krate = Crate::library();
    let is_kernel = |module: &[String]| {
        let file = &krate.files[module];
        let rel = file.strip_prefix(src()).unwrap().to_string_lossy().replace('\\', "/");
        KERNELS.iter().any(|k| rel.starts_with(k))
    };
    let mut found = Vec::new();
    for (module, targets) in krate.graph() {
        if is_kernel(&module) || KERNEL_INPUTS.contains(&name(&module).as_str()) {
            for target in targets.iter().filter(|t| !is_kernel(t) && !KERNEL_INPUTS.contains(&name(t).as_str())) {
                found.push(format!("{} → {}", name(&module), name(target)));
            }
        }
    }
    assert!(found.is_empty(), "kernels importing from above:\n{}", found.join("\n"));
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
    let none = BTreeSet::new();
    assert_eq!(
        absolute(&["sim".into(), "stages".into()], &tree[0], &none),
        Some(vec!["sim".into(), "cloth".into(), "A".into()])
    );
    // a relative re-export names a child module; another crate's path stays out
    let children = BTreeSet::from(["params".to_string()]);
    let reexport = vec!["params".to_string(), "SimParams".to_string()];
    assert_eq!(
        absolute(&m("sim"), &reexport, &children),
        Some(vec!["sim".into(), "params".into(), "SimParams".into()])
    );
    assert_eq!(absolute(&m("sim"), &["bevy".to_string(), "math".to_string()], &children), None);
    // inline paths in code, not only in `use` statements
    let code = "app.init_resource::<super::throws::ThrowQueue>().add_systems(crate::sim::ClothStep, f);";
    assert_eq!(inline_paths(code), vec![vec!["crate", "sim", "ClothStep"], vec!["super", "throws", "ThrowQueue"]]);
    // two modules importing each other form one circle, a third one importing them does not join it
    let graph = BTreeMap::from([
        (m("a"), BTreeSet::from([m("b")])),
        (m("b"), BTreeSet::from([m("a")])),
        (m("c"), BTreeSet::from([m("a")])),
    ]);
    assert_eq!(circles(&graph), vec![vec!["a".to_string(), "b".to_string()]]);
}
