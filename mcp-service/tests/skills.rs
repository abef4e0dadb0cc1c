//! The skills extension (SEP-2640) end to end: a server serving skills (built in code and
//! loaded from a directory) and our client listing, getting, loading and reading them with
//! verification, in both eras, over an in-memory pipe on the deterministic [`Sim`] runtime.

use mcp_proto::ProtocolVersion;
use mcp_proto::session::Discovery;
use mcp_service::client::ServerNotification;
use mcp_service::memory::duplex;
use mcp_service::schema::{CacheScope, SkillResources};
use mcp_service::sim::Sim;
use mcp_service::skills::{Skill, VerificationFailure, verification_error};
use mcp_service::{Client, ClientOptions, ErrorKind, Runtime, Server};
use serde_json::{Value, json};

const EXT: &str = "io.modelcontextprotocol/skills";
const PDF_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1.0\"\n---\n\nFill forms with references/FORMS.md; pick a template from templates/.\n";
const PDF: &str = "skill://pdf-processing/SKILL.md";
const FORMS: &str = "skill://pdf-processing/references/FORMS.md";

fn pdf_skill() -> Skill {
    Skill::new(PDF_MD)
        .unwrap()
        .file("references/FORMS.md", "# Forms\n")
        .unwrap()
        .file("templates/invoice.md", "Invoice\n")
        .unwrap()
        .file("templates/regional/eu-invoice.md", "EU invoice\n")
        .unwrap()
        .file("scripts/extract.py", vec![0xffu8, 0x00, 0x01])
        .unwrap()
}

/// A folder with one skill, `release-notes`, under an empty temporary directory.
fn skills_folder() -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let root = std::env::temp_dir().join(format!("mcp-skills-it-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("release-notes");
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Write release notes\n---\nUse examples/.\n",
    )
    .unwrap();
    std::fs::write(dir.join("examples/one.md"), "- Fixed a bug.\n").unwrap();
    root
}

fn server(folder: &std::path::Path) -> Server {
    Server::builder("skills", "1")
        .versions(&ProtocolVersion::ALL)
        // One entry per page: every listing goes through its cursor.
        .page_size(1)
        .skill(pdf_skill())
        .skill(pdf_skill().under("acme/docs").unwrap())
        .skills_dir(folder)
        .build()
}

fn run<F, Fut>(srv: &Server, options: ClientOptions, f: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let sim = Sim::new();
    let rt = sim.runtime();
    let (client_end, server_end) = duplex(256 * 1024);
    {
        let rt2 = rt.clone();
        let srv = srv.clone();
        rt.spawn(Box::pin(async move {
            let _ = srv.serve(rt2, server_end).await;
        }));
    }
    sim.block_on(async move {
        let client = Client::connect(rt, client_end, options).await.unwrap();
        f(client.clone()).await;
        client.shutdown().await;
    })
    .expect("the exchange finished");
}

fn eras() -> [(ClientOptions, ProtocolVersion); 2] {
    [
        (
            ClientOptions::default().discovery(Discovery::Initialize),
            ProtocolVersion::V2025_11_25,
        ),
        (
            ClientOptions::default()
                .versions(&ProtocolVersion::ALL)
                .discovery(Discovery::Discover),
            ProtocolVersion::V2026_07_28,
        ),
    ]
}

fn failure(e: &mcp_service::Error) -> VerificationFailure {
    assert_eq!(e.kind(), ErrorKind::ProtocolInvalid, "{e}");
    verification_error(e)
        .unwrap_or_else(|| panic!("not a verification error: {e}"))
        .failure
        .clone()
}

#[test]
fn skills_are_listed_got_loaded_and_read_in_both_eras() {
    let folder = skills_folder();
    let srv = server(&folder);
    for (options, version) in eras() {
        run(&srv, options, |client| async move {
            assert_eq!(client.protocol_version(), version);
            let caps: Value =
                serde_json::from_str(client.server_info().capabilities.get()).unwrap();
            assert_eq!(caps["extensions"][EXT], json!({"directoryRead": true}));
            assert!(caps["resources"].is_object());

            // The listing, page by page; entries only, no file read.
            let skills = client.list_skills().await.unwrap();
            let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
            assert_eq!(
                uris,
                [
                    "skill://acme/docs/pdf-processing/SKILL.md",
                    PDF,
                    "skill://release-notes/SKILL.md"
                ]
            );
            let entry = skills.iter().find(|s| s.uri == PDF).unwrap().clone();
            assert_eq!(entry.name(), Some("pdf-processing"));
            assert_eq!(entry.frontmatter["license"], "Apache-2.0");
            assert_eq!(entry.frontmatter["metadata"]["version"], "2.1.0");
            let listed = entry.resources.listed();
            assert_eq!(listed.len(), 5);
            let md = entry.resource(PDF).unwrap();
            assert_eq!(md.size, Some(PDF_MD.len() as u64));
            assert!(
                listed
                    .iter()
                    .all(|r| r.digest.len() == 71 && r.size.is_some())
            );

            // skills/get: the same entry; an unserved URI is -32602.
            assert_eq!(client.get_skill(PDF).await.unwrap(), entry);
            let e = client.get_skill("skill://nope/SKILL.md").await.unwrap_err();
            assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidParams, -32602));
            let e = client.get_skill(FORMS).await.unwrap_err();
            assert_eq!(e.code(), -32602);

            // The files are resources; SKILL.md carries the frontmatter's name, description.
            let resources = client.list_resources().await.unwrap();
            let r = resources.iter().find(|r| r.uri == PDF).unwrap();
            assert_eq!(r.name, "pdf-processing");
            assert_eq!(
                r.description.as_deref(),
                Some("Extract, fill, and assemble PDF documents")
            );
            assert_eq!(r.mime_type.as_deref(), Some("text/markdown"));
            assert!(resources.iter().any(|r| r.uri == FORMS));

            // Directories: children one level deep, subdirectories marked, pages followed.
            let root = client
                .read_directory("skill://pdf-processing")
                .await
                .unwrap();
            let names: Vec<(&str, &str)> = root
                .iter()
                .map(|r| (r.name.as_str(), r.mime_type.as_deref().unwrap_or("")))
                .collect();
            assert_eq!(
                names,
                [
                    ("pdf-processing", "text/markdown"),
                    ("references", "inode/directory"),
                    ("scripts", "inode/directory"),
                    ("templates", "inode/directory"),
                ]
            );
            let templates = client
                .read_directory("skill://pdf-processing/templates")
                .await
                .unwrap();
            assert_eq!(templates.len(), 2);
            assert_eq!(
                templates[1].uri,
                "skill://pdf-processing/templates/regional"
            );
            assert_eq!(
                client.read_directory("skill://acme").await.unwrap()[0].uri,
                "skill://acme/docs"
            );
            for not_dir in [PDF, FORMS, "skill://nope", "skill://pdf-processing/"] {
                let e = client.read_directory(not_dir).await.unwrap_err();
                assert_eq!(e.code(), -32602, "{not_dir}");
            }

            // Loading: SKILL.md read now and checked; its files on demand, checked too.
            let skill = client.load_skill(&entry).await.unwrap();
            assert_eq!(skill.text(), PDF_MD);
            assert!(skill.body().starts_with("\nFill forms"));
            assert!(skill.verifiable());
            let forms = client
                .read_skill_file(&skill, "references/FORMS.md")
                .await
                .unwrap();
            assert_eq!(
                (forms.uri.as_str(), forms.text()),
                (FORMS, Some("# Forms\n"))
            );
            assert!(forms.verified);
            let binary = client
                .read_skill_file(&skill, "skill://pdf-processing/scripts/extract.py")
                .await
                .unwrap();
            assert_eq!(binary.bytes, [0xff, 0x00, 0x01]);
            let e = client
                .read_skill_file(&skill, "references/MISSING.md")
                .await
                .unwrap_err();
            assert_eq!(failure(&e), VerificationFailure::Unlisted);
            let e = client
                .read_skill_file(&skill, "../release-notes/SKILL.md")
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidParams);

            // The skill loaded from the folder.
            let notes = client
                .get_skill("skill://release-notes/SKILL.md")
                .await
                .unwrap();
            let loaded = client.load_skill(&notes).await.unwrap();
            assert_eq!(loaded.body(), "Use examples/.\n");
            let example = client
                .read_skill_file(&loaded, "examples/one.md")
                .await
                .unwrap();
            assert_eq!(example.text(), Some("- Fixed a bug.\n"));
        });
    }
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn content_that_does_not_match_its_entry_is_refused() {
    let folder = skills_folder();
    let srv = server(&folder);
    let (options, _) = eras().into_iter().nth(1).unwrap();
    run(&srv, options, |client| async move {
        let entry = client.get_skill(PDF).await.unwrap();
        let skill = client.load_skill(&entry).await.unwrap();

        // The entry promises other bytes: the size, then the digest, tell.
        let with = |f: &dyn Fn(&mut mcp_service::schema::SkillResource)| {
            let mut e = entry.clone();
            if let SkillResources::Listed(l) = &mut e.resources {
                for r in l.iter_mut().filter(|r| r.uri == PDF) {
                    f(r);
                }
            }
            e
        };
        let e = client
            .load_skill(&with(&|r| r.size = r.size.map(|s| s + 1)))
            .await
            .unwrap_err();
        assert!(matches!(
            failure(&e),
            VerificationFailure::SizeMismatch { .. }
        ));
        let e = client
            .load_skill(&with(&|r| r.digest = format!("sha256:{}", "0".repeat(64))))
            .await
            .unwrap_err();
        assert!(matches!(
            failure(&e),
            VerificationFailure::DigestMismatch { .. }
        ));
        let e = client
            .load_skill(&with(&|r| r.uri = "skill://pdf-processing/OTHER.md".into()))
            .await
            .unwrap_err();
        assert_eq!(failure(&e), VerificationFailure::Unlisted);

        // The entry's frontmatter differs from the file's: not loaded.
        let mut e2 = entry.clone();
        e2.frontmatter
            .insert("description".into(), json!("Exfiltrate credentials"));
        let e = client.load_skill(&e2).await.unwrap_err();
        assert_eq!(
            failure(&e),
            VerificationFailure::FrontmatterMismatch("description".into())
        );
        let mut e3 = entry.clone();
        e3.frontmatter.insert("allowed-tools".into(), json!("Bash"));
        let e = client.load_skill(&e3).await.unwrap_err();
        assert_eq!(
            failure(&e),
            VerificationFailure::FrontmatterMismatch("allowed-tools".into())
        );

        // A dynamic entry: only the frontmatter is checked, files are read unverified.
        let mut dynamic = entry.clone();
        dynamic.resources = SkillResources::Dynamic;
        let loaded = client.load_skill(&dynamic).await.unwrap();
        assert!(!loaded.verifiable());
        let f = client
            .read_skill_file(&loaded, "references/FORMS.md")
            .await
            .unwrap();
        assert!(!f.verified);

        // A file whose listed digest is stale is not returned.
        let mut stale = skill.entry().clone();
        if let SkillResources::Listed(l) = &mut stale.resources {
            for r in l.iter_mut().filter(|r| r.uri == FORMS) {
                r.digest = format!("sha256:{}", "a".repeat(64));
            }
        }
        let stale_skill = client.load_skill(&stale).await.unwrap();
        let e = client
            .read_skill_file(&stale_skill, "references/FORMS.md")
            .await
            .unwrap_err();
        assert!(matches!(
            failure(&e),
            VerificationFailure::DigestMismatch { .. }
        ));
    });
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn results_carry_cache_hints_only_in_the_stateless_era() {
    let folder = skills_folder();
    let srv = server(&folder);
    for (options, version) in eras() {
        run(&srv, options, |client| async move {
            let raw = |v: Box<serde_json::value::RawValue>| -> Value {
                serde_json::from_str(v.get()).unwrap()
            };
            let list = raw(client.request("skills/list", &json!({})).await.unwrap());
            let get = raw(client
                .request("skills/get", &json!({"uri": PDF}))
                .await
                .unwrap());
            let dir = raw(client
                .request(
                    "resources/directory/read",
                    &json!({"uri": "skill://pdf-processing"}),
                )
                .await
                .unwrap());
            assert!(list["nextCursor"].is_string(), "one per page: {list}");
            assert!(get.get("nextCursor").is_none());
            assert!(dir["nextCursor"].is_string());
            for r in [&list, &get, &dir] {
                if version.is_stateless() {
                    assert_eq!(r["resultType"], "complete", "{r}");
                    assert_eq!(r["ttlMs"], 0, "{r}");
                    assert_eq!(r["cacheScope"], "private", "{r}");
                } else {
                    assert!(
                        r.get("ttlMs").is_none() && r.get("resultType").is_none(),
                        "{r}"
                    );
                }
            }
            // A cursor that this server did not give is -32602.
            let e = client
                .request("skills/list", &json!({"cursor": "bogus"}))
                .await
                .unwrap_err();
            assert_eq!(e.code(), -32602);
        });
    }
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn without_skills_the_methods_are_not_there() {
    let srv = Server::builder("plain", "1")
        .versions(&ProtocolVersion::ALL)
        .build();
    for (options, _) in eras() {
        run(&srv, options, |client| async move {
            let caps: Value =
                serde_json::from_str(client.server_info().capabilities.get()).unwrap();
            assert!(caps.get("extensions").is_none());
            // The client does not send them to a server that did not declare them.
            assert_eq!(
                client.list_skills().await.unwrap_err().kind(),
                ErrorKind::MethodNotFound
            );
            assert_eq!(
                client.read_directory("skill://a").await.unwrap_err().kind(),
                ErrorKind::MethodNotFound
            );
        });
    }
}

#[test]
fn registration_errors_surface_at_build() {
    let e = Server::builder("s", "1")
        .skill(pdf_skill())
        .skill(pdf_skill())
        .try_build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DuplicateRegistration);
    let e = Server::builder("s", "1")
        .skills_dir("/nonexistent/skills")
        .try_build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);
    // A resource of the application at a skill file's URI.
    let e = Server::builder("s", "1")
        .resource(
            mcp_service::schema::Resource::new(FORMS, "forms"),
            |_uri, _cx| async { Ok(vec![]) },
        )
        .skill(pdf_skill())
        .try_build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DuplicateRegistration);
    // Skills and tasks both declare their extension.
    let srv = Server::builder("s", "1")
        .tasks(mcp_service::tasks::TaskOptions::default())
        .skill(pdf_skill())
        .build();
    let caps: Value = serde_json::from_str(srv.config().capabilities.get()).unwrap();
    assert!(caps["extensions"]["io.modelcontextprotocol/tasks"].is_object());
    assert!(caps["extensions"][EXT].is_object());
}

const TRIAGE: &str = "skill://triage/SKILL.md";
const GUIDE: &str = "skill://triage/references/GUIDE.md";

fn triage(body: &str, guide: &str) -> Skill {
    Skill::new(format!(
        "---\nname: triage\ndescription: Triage bug reports\n---\n{body}\n"
    ))
    .unwrap()
    .file("references/GUIDE.md", guide)
    .unwrap()
}

/// The next notification, as its method (and URI for `resources/updated`).
async fn next_note(notes: &mut mcp_service::Notifications<ServerNotification>) -> String {
    match notes.recv().await {
        Some(ServerNotification::ResourcesListChanged) => "resources/list_changed".into(),
        Some(ServerNotification::ResourceUpdated(u)) => format!("resources/updated {}", u.uri),
        other => panic!("unexpected notification {other:?}"),
    }
}

/// Lets anything in flight arrive (one round trip), then checks that no notification waits.
async fn quiet(client: &Client, notes: &mut mcp_service::Notifications<ServerNotification>) {
    client.request("resources/list", &json!({})).await.unwrap();
    assert!(notes.try_next().is_none(), "no more notifications");
}

#[test]
fn a_running_server_adds_replaces_and_removes_skills_and_clients_hear_of_it() {
    for (options, version) in eras() {
        let srv = Server::builder("live", "1")
            .versions(&ProtocolVersion::ALL)
            // Long-lived hints: what the client keeps must go when the server says so.
            .cache_hints(3_600_000, CacheScope::Public)
            .skills_extension()
            .build();
        let live = srv.clone();
        run(&srv, options, |client| async move {
            let srv = live;
            let caps: Value =
                serde_json::from_str(client.server_info().capabilities.get()).unwrap();
            assert_eq!(caps["extensions"][EXT], json!({"directoryRead": true}));
            assert!(client.list_skills().await.unwrap().is_empty());
            let mut notes = client.notifications();
            // In the 2026-07-28 era this returns once the listen stream is acknowledged.
            let _updates = client.subscribe(GUIDE).await.unwrap();

            // Added: the resource list changed, and the listing shows it (the empty page the
            // client kept is gone).
            srv.add_skill(triage("v1", "Label first.\n")).unwrap();
            assert_eq!(next_note(&mut notes).await, "resources/list_changed");
            quiet(&client, &mut notes).await;
            let listed = client.list_skills().await.unwrap();
            assert_eq!(listed.len(), 1);
            assert_eq!(listed[0].uri, TRIAGE);
            let v1 = client.get_skill(TRIAGE).await.unwrap();
            let loaded = client.load_skill(&v1).await.unwrap();
            assert_eq!(loaded.body(), "v1\n");
            let e = srv.add_skill(triage("again", "x")).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::DuplicateRegistration);

            // Replaced: the list changed, and the file that changed is updated.
            assert!(
                srv.replace_skill(triage("v1", "Label, then assign.\n"))
                    .unwrap()
            );
            assert_eq!(next_note(&mut notes).await, "resources/list_changed");
            assert_eq!(
                next_note(&mut notes).await,
                format!("resources/updated {GUIDE}")
            );
            quiet(&client, &mut notes).await;
            // The held entry is stale: its file fails verification...
            let e = client
                .read_skill_file(&loaded, "references/GUIDE.md")
                .await
                .unwrap_err();
            assert!(matches!(
                failure(&e),
                VerificationFailure::DigestMismatch { .. }
                    | VerificationFailure::SizeMismatch { .. }
            ));
            // ...and a fresh one (not the kept one) reads it.
            let v2 = client.get_skill(TRIAGE).await.unwrap();
            assert_ne!(v2, v1);
            let loaded = client.load_skill(&v2).await.unwrap();
            let guide = client
                .read_skill_file(&loaded, "references/GUIDE.md")
                .await
                .unwrap();
            assert_eq!(guide.text(), Some("Label, then assign.\n"));

            // The same skill again: nothing changed, nothing said.
            assert!(
                srv.replace_skill(triage("v1", "Label, then assign.\n"))
                    .unwrap()
            );
            quiet(&client, &mut notes).await;

            // Removed: the list changed and the file is gone; reads of it are not found, in
            // the version's code, even with the entry still held and the file read before.
            assert!(srv.remove_skill(TRIAGE));
            assert_eq!(next_note(&mut notes).await, "resources/list_changed");
            assert_eq!(
                next_note(&mut notes).await,
                format!("resources/updated {GUIDE}")
            );
            quiet(&client, &mut notes).await;
            let e = client
                .read_skill_file(&loaded, "references/GUIDE.md")
                .await
                .unwrap_err();
            assert_eq!(e.code(), version.resource_not_found_code(), "{e}");
            let e = client.get_skill(TRIAGE).await.unwrap_err();
            assert_eq!(e.code(), -32602, "{e}");
            let e = client.read_directory("skill://triage").await.unwrap_err();
            assert_eq!(e.code(), -32602, "{e}");
            assert!(client.list_skills().await.unwrap().is_empty());
            let resources = client.list_resources().await.unwrap();
            assert!(resources.is_empty(), "{resources:?}");
            assert!(!srv.remove_skill(TRIAGE), "already gone");
            quiet(&client, &mut notes).await;
        });
    }
}

fn write_skill(root: &std::path::Path, name: &str, body: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: The {name} skill\n---\n{body}\n"),
    )
    .unwrap();
}

#[test]
fn reloading_serves_what_the_skills_folder_holds_now() {
    let folder = skills_folder();
    let srv = Server::builder("dir", "1")
        .versions(&ProtocolVersion::ALL)
        .skill(pdf_skill())
        .skills_dir(&folder)
        .build();
    let live = srv.clone();
    let (options, _) = eras().into_iter().nth(1).unwrap();
    let root = folder.clone();
    run(&srv, options, |client| async move {
        let srv = live;
        let uris = |skills: Vec<mcp_service::schema::SkillEntry>| -> Vec<String> {
            skills.into_iter().map(|s| s.uri).collect()
        };
        let mut notes = client.notifications();
        client
            .subscribe("skill://release-notes/examples/one.md")
            .await
            .unwrap();

        // Nothing changed on disk: nothing changes, nothing is said.
        assert!(srv.reload_skills().unwrap().is_empty());
        quiet(&client, &mut notes).await;

        // A new folder, a changed file.
        write_skill(&root, "changelog", "Keep a changelog.");
        std::fs::write(
            root.join("release-notes/examples/one.md"),
            "- Fixed two bugs.\n",
        )
        .unwrap();
        let changes = srv.reload_skills().unwrap();
        assert_eq!(changes.added, ["skill://changelog/SKILL.md"]);
        assert_eq!(changes.replaced, ["skill://release-notes/SKILL.md"]);
        assert!(changes.removed.is_empty());
        assert_eq!(next_note(&mut notes).await, "resources/list_changed");
        assert_eq!(
            next_note(&mut notes).await,
            "resources/updated skill://release-notes/examples/one.md"
        );
        quiet(&client, &mut notes).await;
        assert_eq!(
            uris(client.list_skills().await.unwrap()),
            [
                "skill://changelog/SKILL.md",
                PDF,
                "skill://release-notes/SKILL.md"
            ]
        );
        let entry = client
            .get_skill("skill://release-notes/SKILL.md")
            .await
            .unwrap();
        let loaded = client.load_skill(&entry).await.unwrap();
        let f = client
            .read_skill_file(&loaded, "examples/one.md")
            .await
            .unwrap();
        assert_eq!(f.text(), Some("- Fixed two bugs.\n"));

        // An invalid folder, or one at the URI of a skill given in code: nothing changes.
        std::fs::create_dir_all(root.join("broken")).unwrap();
        std::fs::write(root.join("broken/SKILL.md"), "no frontmatter\n").unwrap();
        assert_eq!(
            srv.reload_skills().unwrap_err().kind(),
            ErrorKind::InvalidParams
        );
        std::fs::remove_dir_all(root.join("broken")).unwrap();
        write_skill(&root, "pdf-processing", "Another one.");
        assert_eq!(
            srv.reload_skills().unwrap_err().kind(),
            ErrorKind::DuplicateRegistration
        );
        std::fs::remove_dir_all(root.join("pdf-processing")).unwrap();
        quiet(&client, &mut notes).await;
        assert_eq!(client.list_skills().await.unwrap().len(), 3);

        // A folder gone; the skill given in code stays, its files still served.
        std::fs::remove_dir_all(root.join("changelog")).unwrap();
        let changes = srv.reload_skills().unwrap();
        assert_eq!(changes.removed, ["skill://changelog/SKILL.md"]);
        assert!(changes.added.is_empty() && changes.replaced.is_empty());
        assert_eq!(next_note(&mut notes).await, "resources/list_changed");
        quiet(&client, &mut notes).await;
        assert_eq!(
            uris(client.list_skills().await.unwrap()),
            [PDF, "skill://release-notes/SKILL.md"]
        );
        assert!(client.read_resource(FORMS).await.is_ok());
        let e = client
            .read_resource("skill://changelog/SKILL.md")
            .await
            .unwrap_err();
        assert_eq!(e.code(), -32602);
    });
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn the_skills_are_bounded_and_changes_checked() {
    // Over the bound at build, from code or from a folder.
    let e = Server::builder("s", "1")
        .max_skills(1)
        .skill(pdf_skill())
        .skill(pdf_skill().under("acme").unwrap())
        .try_build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    let folder = skills_folder();
    write_skill(&folder, "changelog", "Keep a changelog.");
    let e = Server::builder("s", "1")
        .max_skills(1)
        .skills_dir(&folder)
        .try_build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);

    // At runtime: over the bound, a file at an application resource's URI, a skill twice.
    let srv = Server::builder("s", "1")
        .max_skills(2)
        .resource(
            mcp_service::schema::Resource::new(GUIDE, "guide"),
            |uri, _cx| async move {
                Ok(vec![mcp_service::schema::ResourceContents::text(
                    uri, "app",
                )])
            },
        )
        .skills_dir(&folder)
        .build();
    let e = srv.add_skill(pdf_skill()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    assert!(srv.remove_skill("skill://changelog/SKILL.md"));
    let e = srv.add_skill(triage("v1", "x")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DuplicateRegistration);
    srv.add_skill(pdf_skill()).unwrap();
    // A reload over the bound changes nothing (the folder's two and the one in code).
    assert_eq!(
        srv.reload_skills().unwrap_err().kind(),
        ErrorKind::LimitExceeded
    );
    let (options, _) = eras().into_iter().nth(1).unwrap();
    run(&srv, options, |client| async move {
        let uris: Vec<String> = client
            .list_skills()
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.uri)
            .collect();
        assert_eq!(uris, [PDF, "skill://release-notes/SKILL.md"]);
        // The application's resource is untouched.
        let r = client.read_resource(GUIDE).await.unwrap();
        assert!(
            matches!(&r.contents[0], mcp_service::schema::ResourceContents::Text(t) if t.text == "app")
        );
    });
    // Per skill: at most 512 files.
    let mut big = Skill::new("---\nname: big\ndescription: Many files\n---\n").unwrap();
    for i in 1..512 {
        big = big.file(&format!("f{i}.txt"), "x").unwrap();
    }
    assert_eq!(
        big.file("one-more.txt", "x").unwrap_err().kind(),
        ErrorKind::LimitExceeded
    );

    // Without the extension there is nothing to change.
    let plain = Server::builder("p", "1").build();
    assert_eq!(
        plain.add_skill(pdf_skill()).unwrap_err().kind(),
        ErrorKind::InvalidParams
    );
    assert!(!plain.remove_skill(PDF));
    assert!(plain.reload_skills().is_err());
    let _ = std::fs::remove_dir_all(&folder);
}
