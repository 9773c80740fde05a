// The reference side of the benchmark: pi 1.6.0 itself loading a session.
//
//   node pi_ref.mjs SESSION_MANAGER_JS tree|context FILE [SESSION_DIR]
//
// tree:    SessionManager.open(FILE) + getTree()        (what a listing needs)
// context: SessionManager.open(FILE) + buildSessionContext()
//
// FILE must be a private copy: open() may rewrite a file (migration, a
// missing final newline).  Node.js start-up and the import of pi's module
// are NOT timed (a conservative reference: our side's figure includes
// starting `ls`/`cat`); the timed part is measured with performance.now()
// in this process.  Prints one JSON line: {"ms": ..., "entries": ...,
// "import_ms": ...}.
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const [smPath, mode, file, sessionDir] = process.argv.slice(2);
if (!smPath || !file || (mode !== "tree" && mode !== "context")) {
	console.error("usage: node pi_ref.mjs SESSION_MANAGER_JS tree|context FILE [SESSION_DIR]");
	process.exit(2);
}
const t_import = performance.now();
const { SessionManager } = await import(pathToFileURL(smPath).href);
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
