//! The map cannot go stale: `src/lib.rs`'s module table lists every module under `src/` with
//! its floor, and the code obeys that one dependency order (a module uses only modules on
//! lower floors); every folder's `mod.rs` table names each of its files; README's Layout lists
//! the modules as `lib.rs` does. Reads the source tree; starts no broker.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One row of `lib.rs`'s table.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    module: String,
    floor: u32,
    owns: String,
}

/// The cells of a markdown table row (`| a | b |`), trimmed.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split(" | ").map(|c| c.trim().to_string()).collect()
}

fn lib_table() -> Vec<Row> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("src/lib.rs");
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! | [`"))
        .map(|rest| {
            let cells = cells(&format!("| [`{rest}"));
            assert_eq!(cells.len(), 3, "a lib.rs table row has three cells: {rest}");
            Row {
                module: cells[0]
                    .trim_start_matches("[`")
                    .trim_end_matches("`]")
                    .to_string(),
                floor: cells[1].parse().expect("a floor number"),
                owns: cells[2].clone(),
            }
        })
        .collect()
}

/// The module names of `src/`: its `.rs` files (but `lib.rs`, `main.rs`) and folders.
fn src_modules() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("src"))
        .expect("src/")
        .map(|e| e.expect("entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            if p.is_dir() {
                Some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (stem != "lib" && stem != "main").then(|| stem.to_string())
            }
        })
        .collect();
    names.sort();
    names
}

/// Every `.rs` file of a module, test-only files (`tests.rs`) left out.
fn module_files(module: &str) -> Vec<PathBuf> {
    let file = root().join("src").join(format!("{module}.rs"));
    if file.is_file() {
        return vec![file];
    }
    let mut files = Vec::new();
    let mut dirs = vec![root().join("src").join(module)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a module folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The code of a file without comments, string and char literals, and inline
/// `#[cfg(test)] mod name { ... }` blocks: what the module's non-test code refers to.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if let Some(after) = rest.strip_prefix("#[cfg(test)]") {
            let after = after.trim_start();
            let is_inline_mod = after.starts_with("mod ") || after.starts_with("pub(crate) mod ");
            let header_end = after.find(['{', ';']);
            if is_inline_mod && header_end.is_some_and(|at| after.as_bytes()[at] == b'{') {
                // Skip to the block's closing brace.
                let start = i + (rest.len() - after.len()) + header_end.unwrap_or(0);
                i = skip_block(text, start);
                continue;
            }
        }
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
            continue;
        }
        if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |at| at + 2);
            continue;
        }
        if let Some(end) = literal_end(text, i) {
            out.push(' ');
            i = end;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Where a string, raw string or char literal starting at `i` ends, if one starts there.
fn literal_end(text: &str, i: usize) -> Option<usize> {
    let rest = &text[i..];
    let prev_is_ident = text[..i]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || c == '_');
    let raw = rest.strip_prefix("br").or_else(|| rest.strip_prefix('r'));
    if let Some(after_r) = raw.filter(|_| !prev_is_ident) {
        let hashes = after_r.len() - after_r.trim_start_matches('#').len();
        if after_r[hashes..].starts_with('"') {
            let close = format!("\"{}", "#".repeat(hashes));
            let body = i + (rest.len() - after_r.len()) + hashes + 1;
            return Some(
                text[body..]
                    .find(&close)
                    .map_or(text.len(), |at| body + at + close.len()),
            );
        }
    }
    if rest.starts_with('"') || rest.starts_with("b\"") {
        let mut j = i + rest.find('"').unwrap_or(0) + 1;
        let bytes = text.as_bytes();
        while j < bytes.len() {
            match bytes[j] {
                b'\\' => j += 2,
                b'"' => return Some(j + 1),
                _ => j += 1,
            }
        }
        return Some(text.len());
    }
    if let Some(body) = rest.strip_prefix('\'') {
        // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
        if let Some(escaped) = body.strip_prefix('\\') {
            let close = escaped.find('\'')?;
            return Some(i + 2 + close + 2);
        }
        let c = body.chars().next()?;
        if body[c.len_utf8()..].starts_with('\'') {
            return Some(i + 1 + c.len_utf8() + 1);
        }
    }
    None
}

/// The index just past the block whose `{` is at `open`.
fn skip_block(text: &str, open: usize) -> usize {
    let mut depth = 0;
    let mut i = open;
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
            continue;
        }
        if let Some(end) = literal_end(text, i) {
            i = end;
            continue;
        }
        match rest.as_bytes()[0] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    text.len()
}

/// The crate modules a piece of code names: `crate::x` and `crate::{x, y::z}`.
fn crate_references(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let boundary_ok = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if boundary_ok {
            if let Some(group) = after.strip_prefix('{') {
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                for item in inner.split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        found.push(name);
                    }
                }
            } else {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push(name);
            }
        }
        rest = after;
    }
    found
}

#[test]
fn lib_rs_lists_every_module_once_with_its_floor() {
    let table = lib_table();
    let mut listed: Vec<String> = table.iter().map(|r| r.module.clone()).collect();
    listed.sort();
    let mut unique = listed.clone();
    unique.dedup();
    assert_eq!(
        listed, unique,
        "a module is listed twice in src/lib.rs's table"
    );
    assert_eq!(
        listed,
        src_modules(),
        "src/lib.rs's table and the modules under src/ differ"
    );
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("src/lib.rs");
    let mut declared: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';').to_string())
        .collect();
    declared.sort();
    assert_eq!(
        declared, listed,
        "`pub mod` declarations and the table differ"
    );
    let floors: Vec<u32> = table.iter().map(|r| r.floor).collect();
    assert!(
        floors.windows(2).all(|w| w[0] <= w[1]),
        "the table is in floor order: {floors:?}"
    );
}

#[test]
fn every_module_uses_only_modules_on_lower_floors() {
    let floors: BTreeMap<String, u32> = lib_table()
        .into_iter()
        .map(|r| (r.module, r.floor))
        .collect();
    let mut wrong = Vec::new();
    for (module, floor) in &floors {
        for file in module_files(module) {
            let text = std::fs::read_to_string(&file).expect("a source file");
            for used in crate_references(&code_only(&text)) {
                if &used == module {
                    continue;
                }
                match floors.get(&used) {
                    Some(used_floor) if used_floor < floor => {}
                    Some(used_floor) => wrong.push(format!(
                        "{} (`{module}`, floor {floor}) uses `{used}` (floor {used_floor})",
                        file.strip_prefix(root()).unwrap_or(&file).display()
                    )),
                    None => wrong.push(format!(
                        "{} uses `crate::{used}`, which is not in src/lib.rs's table",
                        file.display()
                    )),
                }
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports against the dependency order:\n{}",
        wrong.join("\n")
    );
}

/// The backticked names in the `//! | ... |` table of a folder's `mod.rs`.
fn folder_table_names(mod_rs: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(mod_rs).expect("mod.rs");
    let mut names = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("//! |")) {
        let first_cell = cells(line.trim_start_matches("//! ")).into_iter().next();
        let mut rest = first_cell.as_deref().unwrap_or("");
        while let Some(open) = rest.find('`') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('`') else { break };
            names.push(after[..close].to_string());
            rest = &after[close + 1..];
        }
    }
    names
}

#[test]
fn every_folder_table_names_each_of_its_files() {
    let mut problems = Vec::new();
    let mut dirs = vec![root().join("src")];
    while let Some(dir) = dirs.pop() {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("a folder") {
            let path = entry.expect("entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            if path.is_dir() {
                dirs.push(path.clone());
                entries.push(format!("{name}/"));
            } else if name.ends_with(".rs") && name != "tests.rs" && name != "mod.rs" {
                entries.push(name);
            }
        }
        let mod_rs = dir.join("mod.rs");
        if !mod_rs.is_file() {
            continue;
        }
        let table = folder_table_names(&mod_rs);
        let shown = dir
            .strip_prefix(root())
            .unwrap_or(&dir)
            .display()
            .to_string();
        if table.is_empty() {
            problems.push(format!("{shown}/mod.rs has no `| file | owns |` table"));
            continue;
        }
        for entry in &entries {
            if !table.contains(entry) {
                problems.push(format!("{shown}/mod.rs's table misses `{entry}`"));
            }
        }
        for name in table
            .iter()
            .filter(|n| n.ends_with(".rs") || n.ends_with('/'))
        {
            if name != "mod.rs" && !entries.contains(name) {
                problems.push(format!(
                    "{shown}/mod.rs's table names `{name}`, which is not there"
                ));
            }
        }
    }
    problems.sort();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn readme_layout_lists_the_modules_as_lib_rs_does() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let layout = readme
        .split("\n## Layout\n")
        .nth(1)
        .expect("README has a Layout section");
    let layout = layout.split("\n## ").next().unwrap_or(layout);
    let rows: Vec<(String, String)> = layout
        .lines()
        .filter(|l| l.starts_with("| `src/"))
        .map(|l| {
            let cells = cells(l);
            (cells[0].clone(), cells.get(1).cloned().unwrap_or_default())
        })
        .collect();
    let expected: Vec<(String, String)> = lib_table()
        .into_iter()
        .map(|r| {
            let path = if root().join("src").join(&r.module).is_dir() {
                format!("`src/{}/`", r.module)
            } else {
                format!("`src/{}.rs`", r.module)
            };
            (path, r.owns)
        })
        .collect();
    let generated: Vec<String> = expected
        .iter()
        .map(|(path, owns)| format!("| {path} | {owns} |"))
        .collect();
    assert_eq!(
        rows,
        expected,
        "README's Layout is not src/lib.rs's table; its src rows should read:\n{}",
        generated.join("\n")
    );
}

#[test]
fn the_scanner_sees_code_not_comments_strings_or_inline_tests() {
    let code = code_only(
        "use crate::a::X; // crate::b\nlet s = \"crate::c\"; let r = r#\"crate::d\"#;\n\
         fn f<'x>(c: char) -> bool { c == '{' && crate::e::g() }\n\
         #[cfg(test)]\nmod tests { use crate::f; }\nuse crate::{g, h::I};\n",
    );
    assert_eq!(crate_references(&code), ["a", "e", "g", "h"]);
}
