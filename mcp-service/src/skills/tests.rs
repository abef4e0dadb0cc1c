use super::*;
use serde_json::json;

const MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: \"2.1\"\n  tags: [a, b]\n---\n\nSee references/FORMS.md.\n";

fn pdf() -> Skill {
    Skill::new(MD)
        .unwrap()
        .file("references/FORMS.md", "Forms.\n")
        .unwrap()
        .file("scripts/extract.py", "print(1)\n")
        .unwrap()
        .file("assets/logo.bin", vec![0u8, 159, 146, 150])
        .unwrap()
}

/// A fresh empty directory under the system's temporary directory.
fn temp_dir(tag: &str) -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mcp-skills-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &std::path::Path, text: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn frontmatter_parses_to_json() {
    let fm = parse_frontmatter(MD).unwrap();
    assert_eq!(
        serde_json::Value::Object(fm),
        json!({
            "name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents",
            "metadata": {"version": "2.1", "tags": ["a", "b"]}
        })
    );
    assert!(parse_frontmatter("---\n\n---\n").unwrap().is_empty());
    for bad in [
        "no block",
        "---\n- a\n- b\n---\n",
        "---\njust text\n---\n",
        "---\na: [unclosed\n---\n",
    ] {
        let e = parse_frontmatter(bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParams, "{bad}");
    }
    let huge = format!("---\na: \"{}\"\n---\n", "x".repeat(MAX_FRONTMATTER_BYTES));
    assert!(
        parse_frontmatter(&huge)
            .unwrap_err()
            .message()
            .contains("bytes")
    );
    // Aliases that expand exponentially are refused, not expanded.
    let mut laughs = String::from("---\na: &a [\"lol\", \"lol\", \"lol\", \"lol\"]\n");
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];
    for pair in names.windows(2) {
        let (prev, name) = (pair[0], pair[1]);
        laughs.push_str(&format!(
            "{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}]\n"
        ));
    }
    laughs.push_str("---\n");
    assert_eq!(
        parse_frontmatter(&laughs).unwrap_err().kind(),
        ErrorKind::InvalidParams
    );
}

#[test]
fn a_skill_needs_a_valid_name_and_a_description() {
    let s = Skill::new(MD).unwrap();
    assert_eq!(s.name(), "pdf-processing");
    assert_eq!(s.uri(), "skill://pdf-processing/SKILL.md");
    assert_eq!(s.files().collect::<Vec<_>>(), ["SKILL.md"]);
    for bad in [
        "---\ndescription: d\n---\n",
        "---\nname: Bad_Name\ndescription: d\n---\n",
        "---\nname: a--b\ndescription: d\n---\n",
        "---\nname: 7\ndescription: d\n---\n",
        "---\nname: a\n---\n",
        "---\nname: a\ndescription: \"\"\n---\n",
        "no frontmatter",
    ] {
        assert_eq!(
            Skill::new(bad).unwrap_err().kind(),
            ErrorKind::InvalidParams,
            "{bad}"
        );
    }
}

#[test]
fn files_are_relative_paths_without_clashes_within_the_limits() {
    let s = Skill::new(MD).unwrap();
    for bad in [
        "", "/abs", "a//b", "./a", "a/../b", "a\\b", "a\nb", "SKILL.md",
    ] {
        assert_eq!(
            s.clone().file(bad, "x").unwrap_err().kind(),
            ErrorKind::InvalidParams,
            "{bad:?}"
        );
    }
    let s = s.file("a/b.md", "x").unwrap();
    for clash in ["a/b.md", "a", "a/b.md/c"] {
        assert_eq!(
            s.clone().file(clash, "y").unwrap_err().kind(),
            ErrorKind::DuplicateRegistration,
            "{clash}"
        );
    }
    // A nested SKILL.md is an ordinary supporting file.
    s.clone().file("nested/SKILL.md", "---\n---\n").unwrap();

    let mut many = Skill::new(MD).unwrap();
    for i in 1..MAX_RESOURCES_PER_SKILL {
        many = many.file(&format!("f/{i}.txt"), "x").unwrap();
    }
    assert_eq!(many.files().count(), MAX_RESOURCES_PER_SKILL);
    assert_eq!(
        many.file("one-more.txt", "x").unwrap_err().kind(),
        ErrorKind::LimitExceeded
    );
    let big = vec![b'x'; usize::try_from(MAX_SKILL_BYTES).unwrap() - MD.len()];
    let full = Skill::new(MD).unwrap().file("big.txt", big).unwrap();
    assert_eq!(
        full.file("byte.txt", "x").unwrap_err().kind(),
        ErrorKind::LimitExceeded
    );
}

#[test]
fn entries_list_every_file_with_digest_and_size() {
    let s = pdf().under("acme/docs").unwrap();
    assert_eq!(s.path(), "acme/docs/pdf-processing");
    let e = s.entry();
    assert_eq!(e.uri, "skill://acme/docs/pdf-processing/SKILL.md");
    assert_eq!(e.name(), Some("pdf-processing"));
    assert_eq!(&e.frontmatter, s.frontmatter());
    let listed = e.resources.listed();
    assert_eq!(listed.len(), 4);
    let md = e.resource(&e.uri).unwrap();
    assert_eq!(md.size, Some(MD.len() as u64));
    assert_eq!(md.digest, digest_of(MD.as_bytes()));
    assert!(mcp_proto::schema::skills::parse_sha256_digest(&md.digest).is_some());
    assert!(
        listed
            .iter()
            .all(|r| r.uri.starts_with("skill://acme/docs/pdf-processing/"))
    );
    for bad in ["", "a b", "..", "a/./b"] {
        assert!(pdf().under(bad).is_err(), "{bad:?}");
    }
    // Known digest: SHA-256 of the empty string.
    assert_eq!(
        digest_of(b""),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn the_catalog_indexes_directories_and_the_files_to_serve() {
    let other = Skill::new("---\nname: notes\ndescription: Notes\n---\n").unwrap();
    let (catalog, files) = Catalog::build(&[pdf(), other]).unwrap();
    let uris: Vec<&str> = catalog.entries().iter().map(|e| e.uri.as_str()).collect();
    assert_eq!(
        uris,
        ["skill://notes/SKILL.md", "skill://pdf-processing/SKILL.md"]
    );
    assert!(catalog.get("skill://pdf-processing/SKILL.md").is_some());
    assert!(catalog.get("skill://pdf-processing").is_none());
    assert_eq!(files.len(), 5);
    let md = files
        .iter()
        .find(|f| f.resource.uri == "skill://pdf-processing/SKILL.md")
        .unwrap();
    assert_eq!(md.resource.name, "pdf-processing");
    assert_eq!(md.resource.mime_type.as_deref(), Some("text/markdown"));
    assert_eq!(
        md.resource.description.as_deref(),
        Some("Extract, fill, and assemble PDF documents")
    );
    let py = files
        .iter()
        .find(|f| f.resource.uri.ends_with("extract.py"))
        .unwrap();
    assert_eq!(py.resource.name, "extract.py");
    assert_eq!(py.resource.mime_type.as_deref(), Some("text/x-python"));
    assert!(py.resource.description.is_some());

    let root = catalog.directory("skill://pdf-processing").unwrap();
    let names: Vec<(&str, Option<&str>)> = root
        .iter()
        .map(|r| (r.name.as_str(), r.mime_type.as_deref()))
        .collect();
    assert_eq!(
        names,
        [
            ("pdf-processing", Some("text/markdown")),
            ("assets", Some(DIRECTORY_MIME_TYPE)),
            ("references", Some(DIRECTORY_MIME_TYPE)),
            ("scripts", Some(DIRECTORY_MIME_TYPE)),
        ]
    );
    let refs = catalog
        .directory("skill://pdf-processing/references")
        .unwrap();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].uri, "skill://pdf-processing/references/FORMS.md");
    for not_dir in [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/",
        "skill://nope",
        "skill://",
    ] {
        assert!(catalog.directory(not_dir).is_none(), "{not_dir}");
    }

    // Prefixes are directories too.
    let (catalog, _) = Catalog::build(&[pdf().under("acme/docs").unwrap()]).unwrap();
    assert_eq!(catalog.directory("skill://acme").unwrap()[0].name, "docs");
    assert_eq!(
        catalog.directory("skill://acme/docs").unwrap()[0].uri,
        "skill://acme/docs/pdf-processing"
    );

    // A skill twice, or a URI served with two contents, is refused.
    assert_eq!(
        Catalog::build(&[pdf(), pdf()]).err().unwrap().kind(),
        ErrorKind::DuplicateRegistration
    );
}

#[test]
fn nested_skills_share_their_files() {
    let inner_md = "---\nname: forms\ndescription: Forms\n---\n";
    let outer = pdf().file("forms/SKILL.md", inner_md).unwrap();
    let inner = Skill::new(inner_md)
        .unwrap()
        .under("pdf-processing")
        .unwrap();
    let (catalog, files) = Catalog::build(&[outer.clone(), inner]).unwrap();
    assert_eq!(catalog.entries().len(), 2);
    let nested: Vec<_> = files
        .iter()
        .filter(|f| f.resource.uri == "skill://pdf-processing/forms/SKILL.md")
        .collect();
    assert_eq!(nested.len(), 1);
    assert_eq!(nested[0].resource.name, "forms");
    assert_eq!(nested[0].resource.description.as_deref(), Some("Forms"));
    // The enclosing skill lists it among its files.
    assert!(
        catalog
            .get("skill://pdf-processing/SKILL.md")
            .unwrap()
            .resource("skill://pdf-processing/forms/SKILL.md")
            .is_some()
    );
    let changed = Skill::new("---\nname: forms\ndescription: Other\n---\n")
        .unwrap()
        .under("pdf-processing")
        .unwrap();
    assert_eq!(
        Catalog::build(&[outer, changed]).err().unwrap().kind(),
        ErrorKind::DuplicateRegistration
    );
}

#[test]
fn file_names_are_percent_encoded_in_uris() {
    let s = Skill::new(MD).unwrap().file("my docs/a#b.md", "x").unwrap();
    let e = s.entry();
    assert!(
        e.resources
            .listed()
            .iter()
            .any(|r| r.uri == "skill://pdf-processing/my%20docs/a%23b.md")
    );
    let (catalog, _) = Catalog::build(&[s]).unwrap();
    let root = catalog.directory("skill://pdf-processing").unwrap();
    assert!(root.iter().any(|r| r.name == "my docs"));
    let dir = catalog
        .directory("skill://pdf-processing/my%20docs")
        .unwrap();
    assert_eq!(dir[0].name, "a#b.md");
    assert_eq!(decode_segment("a%2"), "a%2");
}

#[test]
fn contents_are_text_or_base64() {
    let text = FileData::new(b"hi".to_vec(), "text/plain".into());
    assert_eq!(
        serde_json::to_value(contents_of("u".into(), &text)).unwrap(),
        json!({"uri": "u", "mimeType": "text/plain", "text": "hi"})
    );
    let blob = FileData::new(vec![0xff, 0], "application/octet-stream".into());
    assert_eq!(
        serde_json::to_value(contents_of("u".into(), &blob)).unwrap()["blob"],
        "/wA="
    );
    assert_eq!(guess_mime_type("a/B.MD", b""), "text/markdown");
    assert_eq!(guess_mime_type("noext", b"text"), "text/plain");
    assert_eq!(
        guess_mime_type("x.dat", &[0xff, 0xfe, 0]),
        "application/octet-stream"
    );
}

#[test]
fn skills_load_from_directories() {
    let root = temp_dir("load");
    write(&root.join("pdf-processing/SKILL.md"), MD.as_bytes());
    write(
        &root.join("pdf-processing/references/FORMS.md"),
        b"Forms.\n",
    );
    write(&root.join("pdf-processing/.hidden"), b"left out");
    write(&root.join("pdf-processing/.git/config"), b"left out");
    write(
        &root.join("notes/SKILL.md"),
        b"---\nname: notes\ndescription: Notes\n---\n",
    );
    write(&root.join("not-a-skill/README.md"), b"no SKILL.md here");
    write(&root.join("loose-file.txt"), b"ignored");

    let skills = load_dir(&root).unwrap();
    let names: Vec<&str> = skills.iter().map(Skill::name).collect();
    assert_eq!(names, ["notes", "pdf-processing"]);
    let pdf = &skills[1];
    assert_eq!(
        pdf.files().collect::<Vec<_>>(),
        ["SKILL.md", "references/FORMS.md"]
    );
    assert_eq!(pdf.frontmatter()["metadata"]["version"], "2.1");

    // The frontmatter's name must be the folder's.
    write(
        &root.join("wrong/SKILL.md"),
        b"---\nname: right\ndescription: d\n---\n",
    );
    let e = load_dir(&root).unwrap_err();
    assert!(e.message().contains("not `wrong`"), "{e}");
    assert_eq!(
        Skill::from_dir(root.join("missing")).unwrap_err().kind(),
        ErrorKind::InvalidParams
    );
    assert!(load_dir(root.join("missing")).is_err());
    let _ = std::fs::remove_dir_all(&root);
}
