// The reference side of the benchmark: pi 1.6.0 itself loading a session.
//
//   node pi_ref.mjs SESSION_MANAGER_JS tree|context FILE [SESSION_DIR]
//   node pi_ref.mjs SESSION_MANAGER_JS list QUERY
//
// tree:    SessionManager.open(FILE) + getTree()        (what a listing needs)
// context: SessionManager.open(FILE) + buildSessionContext()
// list:    pi's /resume path over every session of the store:
//          SessionManager.listAll() (the sessions dir of PI_CODING_AGENT_DIR,
//          which the harness points at the bench store), then
//          filterAndSortSessions(sessions, QUERY, "recent") of the session
//          selector's search.  Prints {"ms", "list_ms", "filter_ms",
//          "sessions", "matches", "ids"}: ms is both together, ids the
//          matching sessions' ids in pi's order.
//
// FILE must be a private copy: open() may rewrite a file (migration, a
// missing final newline).  Node.js start-up and the import of pi's module
// are NOT timed (a conservative reference: our side's figure includes
// starting `ls`/`cat`); the timed part is measured with performance.now()
// in this process.  Prints one JSON line: {"ms": ..., "entries": ...,
// "import_ms": ...}.
import { writeSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const [smPath, mode, file, sessionDir] = process.argv.slice(2);
if (!smPath || file === undefined || (mode !== "tree" && mode !== "context" && mode !== "list")) {
	console.error("usage: node pi_ref.mjs SESSION_MANAGER_JS tree|context FILE [SESSION_DIR]\n" +
		"       node pi_ref.mjs SESSION_MANAGER_JS list QUERY");
	process.exit(2);
}
const t_import = performance.now();
const { SessionManager } = await import(pathToFileURL(smPath).href);
if (mode === "list") {
	// session-selector-search.js sits beside core/ in pi's dist/.
	const searchUrl = new URL("../modes/interactive/components/session-selector-search.js", pathToFileURL(smPath));
	const { filterAndSortSessions } = await import(searchUrl.href);
	const t0 = performance.now();
	const sessions = await SessionManager.listAll();
	const t1 = performance.now();
	const matched = filterAndSortSessions(sessions, file, "recent");
	const t2 = performance.now();
	// Written synchronously: process.exit() right after an asynchronous
	// write to a pipe cuts it at 64 KiB (the huge store's ids are more).
	writeSync(1, JSON.stringify({
		ms: t2 - t0, list_ms: t1 - t0, filter_ms: t2 - t1, import_ms: t0 - t_import,
		sessions: sessions.length, matches: matched.length, ids: matched.map((s) => s.id),
	}) + "\n");
	process.exit(0);
}
const t0 = performance.now();
const sm = SessionManager.open(file, sessionDir);
let n = 0;
if (mode === "tree") {
	const roots = sm.getTree();
	// Touch the result so nothing is optimised away.
	n = roots.length;
} else {
	const ctx = sm.buildSessionContext();
	n = ctx.messages.length;
}
const t1 = performance.now();
process.stdout.write(JSON.stringify({ ms: t1 - t0, import_ms: t0 - t_import, entries: sm.getEntryCount(), n }) + "\n");
