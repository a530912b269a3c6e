// Shared helpers for the editor end-to-end tests: the binaries, the
// stand-in provider on loopback, and a scratch Go workspace.
import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const fixtures = path.join(here, 'fixtures');
export const KEY = 'sk-e2e-0123456789abcdef';

/** bin returns the path of a binary given by an environment variable (set by run.sh). */
export function bin(envName) {
  const p = process.env[envName];
  if (!p || !existsSync(p)) {
    throw new Error(`${envName} is not set to a built binary (run editors/test/run.sh, which builds it)`);
  }
  return p;
}

/** tmpdir makes a fresh temporary directory. */
export function tmpdir(prefix = 'kimi-e2e-') {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * workspace copies the Go fixture to a temporary folder and returns its
 * paths, with private cache and config homes so no user file leaks in.
 */
export function workspace() {
  const root = tmpdir();
  const ws = path.join(root, 'ws');
  cpSync(path.join(fixtures, 'workspace'), ws, { recursive: true });
  return {
    root,
    ws,
    file: path.join(ws, 'main.go'),
    text: readFileSync(path.join(ws, 'main.go'), 'utf8'),
    cacheHome: path.join(root, 'cache'),
    configHome: path.join(root, 'config'),
  };
}

/**
 * agentEnv is the environment of a `kimi-lsp acp` (or of the client that
 * starts it) in ws: the stand-in as the provider, private homes (HOME is
 * also the helper gopls's GOPATH); extra is added last.
 */
export function agentEnv(ws, standin, extra = {}) {
  return {
    ...process.env,
    KIMI_API_KEY: KEY,
    KIMI_BASE_URL: standin.url,
    XDG_CACHE_HOME: ws.cacheHome,
    XDG_CONFIG_HOME: ws.configHome,
    XDG_STATE_HOME: path.join(ws.root, 'state'),
    HOME: ws.root,
    ...extra,
  };
}

/**
 * startStandin runs kimi-standin with a fixture script and resolves once it
 * prints its base URL. stderr (-v: one line per request, with hung_up=) is
 * kept for assertions; the stand-in exits when stop() closes its stdin.
 */
export function startStandin(scriptName) {
  const dir = tmpdir('kimi-standin-');
  const logFile = path.join(dir, 'requests.jsonl');
  const stderrFile = path.join(dir, 'stderr.log');
  const child = spawn(
    bin('KIMI_STANDIN_BIN'),
    ['-addr', '127.0.0.1:0', '-key', KEY, '-script', path.join(fixtures, scriptName), '-log', logFile, '-v'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
    appendFileSync(stderrFile, d);
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`kimi-standin printed no URL in 30 s; stderr:\n${stderr}`)), 30000);
    child.on('exit', (code) => reject(new Error(`kimi-standin exited with ${code}; stderr:\n${stderr}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      const url = out.slice(0, nl).trim();
      resolve({
        url,
        stderrFile,
        logFile,
        stderr: () => stderr,
        requests: () =>
          existsSync(logFile)
            ? readFileSync(logFile, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l))
            : [],
        /** hungUp counts requests the stand-in saw the client abandon. */
        hungUp: () => (stderr.match(/hung_up=true/g) ?? []).length,
        stop: () => {
          child.stdin.end();
          setTimeout(() => child.kill('SIGKILL'), 2000).unref();
        },
      });
    });
  });
}

/** waitFor polls cond every 20 ms until it returns truthy or timeoutMs passes. */
export async function waitFor(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * processesOf lists the processes ("pid name") whose environment holds
 * XDG_CACHE_HOME=cacheHome: a scenario's kimi-lsp and the helper language
 * servers it started (gopls, pyright), which inherit it. It reads /proc
 * (Linux); elsewhere it finds none.
 */
export function processesOf(cacheHome) {
  const mark = `XDG_CACHE_HOME=${cacheHome}`;
  let pids = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const found = [];
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(mark)) {
        found.push(`${pid} ${readFileSync(`/proc/${pid}/comm`, 'latin1').trim()}`);
      }
    } catch {
      // gone, or another user's
    }
  }
  return found;
}

/**
 * waitGone waits until no process of the scenario is left (processesOf),
 * for timeoutMs at most, and returns those still there. kimi-lsp stops
 * its helpers within about 2 s of the editor's exit; a gopls still
 * writing its cache into the scenario's directory would race run.sh's
 * removal of it (rm: "Directory not empty"). The bound is generous, not
 * a speed check: on a loaded machine the editor's own gopls and ours took
 * over 10 s to exit, while a process nobody stops never goes at all.
 */
export async function waitGone(cacheHome, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = processesOf(cacheHome);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * closeServer ends an LSP session as an editor does: shutdown (3 s at most),
 * exit, then kills the server process if it is still there 2 s later.
 */
export async function closeServer(conn, proc) {
  try {
    await Promise.race([conn.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 3000))]);
    conn.sendNotification('exit');
  } catch {
    // the server may already be gone
  }
  setTimeout(() => proc.kill('SIGKILL'), 2000).unref();
  conn.dispose();
}

export const EXPLAIN_MARKER = 'KIMI-E2E-EXPLANATION';
export const SLOW_MARKER = 'KIMI-E2E-SLOW';
export const FIXED_LINE = '\treturn a + b';
export { writeFileSync };
