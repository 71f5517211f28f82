//! The HTML report in a real browser: headless Chromium loads a report the
//! CLI wrote, a test script (added to a copy of the page, never to the
//! product) clicks decisions like a user, and the test checks what the
//! page highlighted against the run's own JSON output.
//!
//! Needs Chromium (`/usr/bin/chromium`, or `WASCHED_CHROMIUM`), so the
//! tests are ignored with that reason: `make test` runs them (`--ignored`)
//! when it finds Chromium, and `.ci/run`, which installs it, always.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The Chromium to drive: `WASCHED_CHROMIUM`, else Debian's. These tests
/// are `#[ignore]`d with the tool as the reason; run on purpose
/// (`--ignored`), a missing browser is a failure.
fn chromium() -> PathBuf {
    let candidates = [
        std::env::var_os("WASCHED_CHROMIUM").map(PathBuf::from),
        Some(PathBuf::from("/usr/bin/chromium")),
        Some(PathBuf::from("/usr/bin/chromium-browser")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.exists())
        .expect("Chromium is not installed (apt-get install chromium, or set WASCHED_CHROMIUM)")
}

fn wasched(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_wasched"))
        .args(args)
        .env("WASCHED_CACHE_DIR", common::cache_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success() || args[0] == "compare",
        "wasched {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs headless Chromium on `page`: returns the DOM after the page's
/// scripts ran and the console lines it logged.
fn run_chromium(browser: &Path, page: &Path, extra: &[&str]) -> (String, Vec<String>) {
    let profile = common::tempdir("chromium-profile");
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1600,1000",
            "--virtual-time-budget=15000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("running chromium");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

/// The test script: once the page is ready, selects each decision in
/// `targets` by clicking its row and records the pods and domain cells
/// the page highlighted, plus every node cell; then writes the record as
/// JSON into `<pre id="harness">`.
const HARNESS: &str = r#"<script>
(function () {
  function record() {
    var out = { nodes: {}, selections: [] };
    document.querySelectorAll('section.map').forEach(function (map) {
      out.nodes[map.dataset.run] = Array.from(map.querySelectorAll('.node')).map(function (e) { return e.dataset.node; });
      out.pods = out.pods || {};
      out.pods[map.dataset.run] = Array.from(map.querySelectorAll('.pod')).map(function (e) { return e.dataset.pod; });
    });
    TARGETS.forEach(function (t) {
      var row = Array.from(document.querySelectorAll('.decision')).find(function (e) {
        return e.dataset.kind === t[0] && e.dataset.name === t[1];
      });
      if (!row) { out.selections.push({ kind: t[0], name: t[1], missing: true }); return; }
      row.click();
      var map = document.querySelector('section.map[data-run="0"]');
      out.selections.push({
        kind: t[0], name: t[1],
        pods: Array.from(map.querySelectorAll('.pod.selected')).map(function (e) { return e.dataset.pod; }),
        domain: Array.from(map.querySelectorAll('.node.in-domain')).map(function (e) { return e.dataset.node; }),
        selectedElsewhere: document.querySelectorAll('.selected:not(.pod)').length
      });
      row.click();
    });
    var pre = document.createElement('pre');
    pre.id = 'harness';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  function wait() { document.body.dataset.ready === 'true' ? record() : setTimeout(wait, 50); }
  wait();
})();
</script></body>"#;

/// Adds the harness, with `targets` as `[kind, name]` pairs, to a copy of
/// the report and returns the copy's path.
fn with_harness(report: &Path, targets: &[(String, String)]) -> PathBuf {
    let page = std::fs::read_to_string(report).unwrap();
    let targets: Vec<[&str; 2]> = targets
        .iter()
        .map(|(k, n)| [k.as_str(), n.as_str()])
        .collect();
    let script = HARNESS.replace("TARGETS", &serde_json::to_string(&targets).unwrap());
    let at = page.rfind("</body>").expect("the report has a body");
    let copy = report.with_extension("harness.html");
    std::fs::write(
        &copy,
        format!("{}{}{}", &page[..at], script, &page[at + 7..]),
    )
    .unwrap();
    copy
}

fn harness_record(dom: &str) -> Value {
    let start = dom.find("<pre id=\"harness\">").expect("the harness ran") + 18;
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap()
}

fn strings(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
#[ignore = "needs Chromium (apt-get install chromium); make test runs it when installed"]
fn the_report_renders_every_node_and_highlights_exactly_a_groups_pods() {
    let browser = chromium();
    let dir = common::tempdir("browser");
    let report = dir.join("report.html");
    let json = wasched(&["simulate", "-o", "json", "--html", report.to_str().unwrap()]);
    let outcome: Value = serde_json::from_str(&json).unwrap();
    assert!(
        !outcome["unschedulable"].as_array().unwrap().is_empty(),
        "some pods stay pending"
    );

    // What the page must show, from the snapshot: every node once, every
    // pod once (on its node, evicted on the node it left, or in the pending
    // tray); selecting a group highlights exactly its members.
    let snapshot = wasched::read_snapshot(&[]).unwrap();
    let on_map = |pod: &wasched::model::PodInfo| !pod.terminating;
    let all_pods: Vec<String> = snapshot
        .pods
        .iter()
        .filter(|p| on_map(p))
        .map(|p| p.key.clone())
        .collect();
    let mut targets = Vec::new();
    let mut expected = Vec::new();
    for decision in outcome["podGroups"].as_array().unwrap() {
        let name = decision["podGroup"].as_str().unwrap();
        let group = snapshot.groups.iter().find(|g| g.key == name).unwrap();
        let pods: BTreeSet<String> = group
            .members
            .iter()
            .map(|&p| &snapshot.pods[p as usize])
            .filter(|p| on_map(p))
            .map(|p| p.key.clone())
            .collect();
        let domain: BTreeSet<String> = match decision["domains"].as_array().and_then(|d| d.last()) {
            Some(d) => snapshot
                .nodes
                .iter()
                .filter(|n| {
                    n.labels.get(d["key"].as_str().unwrap()).map(String::as_str)
                        == d["value"].as_str()
                })
                .map(|n| n.name.clone())
                .collect(),
            None => BTreeSet::new(),
        };
        targets.push(("PodGroup".to_string(), name.to_string()));
        expected.push((pods, domain));
    }
    assert!(
        expected.iter().any(|(_, domain)| !domain.is_empty()),
        "the default snapshot has topology placements"
    );
    assert!(
        expected.iter().filter(|(pods, _)| pods.len() >= 2).count() >= 3,
        "several groups have pods on the map"
    );

    let page = with_harness(&report, &targets);
    let (dom, console) = run_chromium(&browser, &page, &["--dump-dom"]);
    assert!(console.is_empty(), "console output: {console:#?}");
    let record = harness_record(&dom);
    let nodes: Vec<String> = record["nodes"]["0"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let all: Vec<String> = snapshot.nodes.iter().map(|n| n.name.clone()).collect();
    let mut sorted = nodes.clone();
    sorted.sort();
    assert_eq!(sorted, all, "every node once on the map");
    let mut pods: Vec<String> = record["pods"]["0"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    pods.sort();
    assert_eq!(pods, all_pods, "every pod once on the map");
    for ((kind, name), (pods, domain)) in targets.iter().zip(&expected) {
        let selection = record["selections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name.as_str() && s["kind"] == kind.as_str())
            .unwrap();
        assert!(
            selection.get("missing").is_none(),
            "{name}: no decision row"
        );
        assert_eq!(
            &strings(&selection["pods"]),
            pods,
            "{name}: highlighted pods"
        );
        assert_eq!(
            &strings(&selection["domain"]),
            domain,
            "{name}: highlighted domain"
        );
        assert_eq!(selection["selectedElsewhere"], 0, "{name}");
    }

    // A screenshot of a selection, for the test's log.
    let shot = dir.join("report.png");
    let selected = format!(
        "{}#select=PodGroup/{}",
        report.display(),
        targets
            .iter()
            .find(|(_, n)| n.contains("llm-nvl"))
            .map_or(&targets[0].1, |t| &t.1)
    );
    run_chromium(
        &browser,
        Path::new(&selected),
        &[&format!("--screenshot={}", shot.display())],
    );
    assert!(
        std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000),
        "screenshot written"
    );
    eprintln!("report screenshot: {}", shot.display());
}

#[test]
#[ignore = "needs Chromium (apt-get install chromium); make test runs it when installed"]
fn the_comparison_report_shows_both_maps_and_marks_the_differences() {
    let browser = chromium();
    let dir = common::tempdir("browser-compare");
    let config = dir.join("binpack.yaml");
    std::fs::write(
        &config,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: WaschedGpuBinPacking}]\n",
    )
    .unwrap();
    let report = dir.join("compare.html");
    let json = wasched(&[
        "compare",
        "--a",
        "bundled",
        "--b",
        config.to_str().unwrap(),
        "-o",
        "json",
        "--html",
        report.to_str().unwrap(),
    ]);
    let comparison: Value = serde_json::from_str(&json).unwrap();
    let differing: BTreeSet<String> = comparison["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pod"].as_str().unwrap().to_string())
        .collect();
    assert!(!differing.is_empty());
    let page = with_harness(&report, &[]);
    let probe = page.with_extension("probe.html");
    let text = std::fs::read_to_string(&page).unwrap().replace(
        "pre.textContent = JSON.stringify(out);",
        "out.differs = Array.from(document.querySelectorAll('section.map[data-run=\"1\"] .pod.differs')).map(function (e) { return e.dataset.pod; }); pre.textContent = JSON.stringify(out);",
    );
    std::fs::write(&probe, text).unwrap();
    let (dom, console) = run_chromium(&browser, &probe, &["--dump-dom"]);
    assert!(console.is_empty(), "console output: {console:#?}");
    let record = harness_record(&dom);
    let snapshot_nodes = wasched::read_snapshot(&[]).unwrap().nodes.len();
    for run in ["0", "1"] {
        assert_eq!(
            record["nodes"][run].as_array().unwrap().len(),
            snapshot_nodes,
            "map {run}"
        );
    }
    assert_eq!(strings(&record["differs"]), differing);
}

/// What a replay's pictures drew, written as JSON into `<pre id="harness">`
/// once the page's script ran.
const PICTURES_PROBE: &str = r#"<script>
(function () {
  var out = { runs: [] };
  [0, 1].forEach(function (i) {
    var timeline = document.querySelector('.timeline.run-' + i);
    if (!timeline) return;
    out.runs.push({
      gpus: document.querySelectorAll('#gpus path.run-' + i).length,
      pending: document.querySelectorAll('#pending path.run-' + i).length,
      cdfs: Array.from(document.querySelectorAll('#waits path.cdf.run-' + i)).map(function (p) { return p.dataset.class; }),
      jobs: Array.from(timeline.querySelectorAll('g.job')).map(function (g) {
        return { job: g.dataset.job, preemptions: g.querySelectorAll('line.preempt').length, ran: g.querySelectorAll('rect.ran').length };
      }),
      ticks: Array.from(timeline.querySelectorAll('svg > text')).map(function (t) { return t.textContent; })
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'harness';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script></body>"#;

/// Runs the probe on a copy of the pictures page: what it drew.
fn probe_pictures(browser: &Path, page: &Path) -> Value {
    let probe = page.with_extension("probe.html");
    let text = std::fs::read_to_string(page)
        .unwrap()
        .replacen("</body>", PICTURES_PROBE, 1);
    std::fs::write(&probe, text).unwrap();
    let (dom, console) = run_chromium(browser, &probe, &["--dump-dom"]);
    assert!(console.is_empty(), "console output: {console:#?}");
    harness_record(&dom)
}

#[test]
#[ignore = "needs Chromium (apt-get install chromium); make test runs it when installed"]
fn a_replays_pictures_draw_its_series_waits_and_largest_jobs() {
    let browser = chromium();
    let dir = common::tempdir("browser-replay");
    let nodes = common::testdata("replay/alibaba/node_info_df.csv");
    let jobs = common::testdata("replay/alibaba/job_info_df.csv");
    let report = dir.join("replay.html");
    let json = wasched(&[
        "replay",
        "--cluster-from",
        nodes.to_str().unwrap(),
        jobs.to_str().unwrap(),
        "-o",
        "json",
        "--html",
        report.to_str().unwrap(),
    ]);
    let replay: Value = serde_json::from_str(&json).unwrap();
    let record = probe_pictures(&browser, &report);
    let runs = record["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{record}");
    let run = &runs[0];
    assert_eq!(
        (run["gpus"].as_u64(), run["pending"].as_u64()),
        (Some(1), Some(1))
    );
    // One distribution per class whose jobs started.
    let classes: BTreeSet<String> = replay["summary"]["byPriority"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, t)| t["wait"]["count"].as_u64().unwrap() > 0)
        .map(|(class, _)| class.clone())
        .collect();
    assert_eq!(strings(&run["cdfs"]), classes);
    // Every job (10 < 20) on the timeline, each preemption marked.
    let rows = replay["jobs"].as_array().unwrap();
    let drawn = run["jobs"].as_array().unwrap();
    assert_eq!(drawn.len(), rows.len());
    for row in rows {
        let bar = drawn
            .iter()
            .find(|b| b["job"] == row["job"])
            .unwrap_or_else(|| panic!("{} not drawn", row["job"]));
        assert_eq!(bar["preemptions"], row["preempted"], "{}", row["job"]);
        assert_eq!(
            bar["ran"].as_u64().unwrap(),
            u64::from(!row["start"].is_null())
        );
    }
    assert!(drawn.iter().any(|b| b["preemptions"].as_u64().unwrap() > 0));
    // The 24-GPU gang is the largest job: first.
    assert_eq!(drawn[0]["job"], "org-57/job-2001");
}

#[test]
#[ignore = "needs Chromium (apt-get install chromium); make test runs it when installed"]
fn a_comparison_over_time_draws_both_runs_on_shared_axes() {
    let browser = chromium();
    let dir = common::tempdir("browser-compare-trace");
    let config = dir.join("no-preemption.yaml");
    std::fs::write(
        &config,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: WaschedWorkloadPreemption}]\n",
    )
    .unwrap();
    let nodes = common::testdata("replay/alibaba/node_info_df.csv");
    let jobs = common::testdata("replay/alibaba/job_info_df.csv");
    let report = dir.join("compare.html");
    wasched(&[
        "compare",
        "--trace",
        jobs.to_str().unwrap(),
        "--cluster-from",
        nodes.to_str().unwrap(),
        "--a",
        "bundled",
        "--b",
        config.to_str().unwrap(),
        "--html",
        report.to_str().unwrap(),
    ]);
    let record = probe_pictures(&browser, &report);
    let runs = record["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{record}");
    for run in runs {
        assert_eq!(
            (run["gpus"].as_u64(), run["pending"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(run["jobs"].as_array().unwrap().len(), 10);
    }
    // Shared axes: both timelines have the same ticks.
    assert!(!runs[0]["ticks"].as_array().unwrap().is_empty());
    assert_eq!(runs[0]["ticks"], runs[1]["ticks"]);
    // Without preemption, nothing is preempted on B.
    let preempted = |run: &Value| -> u64 {
        run["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["preemptions"].as_u64().unwrap())
            .sum()
    };
    assert!(preempted(&runs[0]) > 0);
    assert_eq!(preempted(&runs[1]), 0);
}

/// What the estimates page drew, written as JSON into `<pre id="harness">`.
const ESTIMATES_PROBE: &str = r#"<script>
(function () {
  var rows = Array.from(document.querySelectorAll('#timeline g[data-name]')).map(function (g) {
    var start = g.querySelector('circle.start');
    return { name: g.dataset.name, estimate: g.dataset.estimate,
             x: start ? Number(start.getAttribute('cx')) : null,
             never: g.querySelectorAll('rect.never').length,
             unknown: g.querySelectorAll('rect.unknown').length };
  });
  var pre = document.createElement('pre');
  pre.id = 'harness';
  pre.textContent = JSON.stringify({ from: document.getElementById('from').textContent, rows: rows });
  document.body.appendChild(pre);
})();
</script></body>"#;

#[test]
#[ignore = "needs Chromium (apt-get install chromium); make test runs it when installed"]
fn the_estimates_page_draws_each_start_on_a_timeline() {
    let browser = chromium();
    let dir = common::tempdir("browser-estimates");
    let page = dir.join("estimates.html");
    let file = common::testdata("estimate/rack.yaml");
    let json = wasched(&[
        "simulate",
        file.to_str().unwrap(),
        "--until-start",
        "--default-runtime",
        "90m",
        "-o",
        "json",
        "--html",
        page.to_str().unwrap(),
    ]);
    let estimates: Value = serde_json::from_str(&json).unwrap();
    let probe = page.with_extension("probe.html");
    let text = std::fs::read_to_string(&page)
        .unwrap()
        .replacen("</body>", ESTIMATES_PROBE, 1);
    std::fs::write(&probe, text).unwrap();
    let (dom, console) = run_chromium(&browser, &probe, &["--dump-dom"]);
    assert!(console.is_empty(), "console output: {console:#?}");
    let record = harness_record(&dom);
    assert_eq!(
        record["from"],
        "Estimated starts from 2026-12-06T10:00:00Z (the snapshot's latest timestamp)"
    );
    let rows = record["rows"].as_array().unwrap();
    let listed = estimates["estimates"].as_array().unwrap();
    assert_eq!(rows.len(), listed.len());
    let mut last = f64::MIN;
    for (row, estimate) in rows.iter().zip(listed) {
        assert_eq!(row["name"], estimate["name"]);
        assert_eq!(row["estimate"], estimate["estimate"]);
        match estimate["estimate"].as_str().unwrap() {
            "never" => assert_eq!(row["never"], 1, "{row}"),
            "not estimable" => assert_eq!(row["unknown"], 1, "{row}"),
            _ => {
                // Later starts are drawn further right.
                let x = row["x"].as_f64().unwrap();
                assert!(x >= last, "{row}");
                last = x;
            }
        }
    }
    assert!(
        rows.iter().filter(|r| r["x"].is_number()).count() >= 2,
        "{record}"
    );
}
