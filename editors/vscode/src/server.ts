// Server: finds the kimi-lsp binary and words the message shown when it is
// missing. Pure functions over an injected file check, tested without VS Code.

import * as path from 'path';

/**
 * The command that installs the server, run in a clone of the repository
 * (the module is not published: `go install …@latest` fails).
 */
export const INSTALL_COMMAND = 'go install ./cmd/kimi-lsp';

/** The command that builds the server inside a clone of the repository. */
export const LOCAL_BUILD_COMMAND = 'go build -o kimi-lsp ./cmd/kimi-lsp';

/** What findServer looks at. */
export interface FindOptions {
  /** The `kimi.serverPath` setting ('' when unset). `~` and `${workspaceFolder}` are expanded. */
  configured: string;
  /** The process environment (PATH, GOBIN, GOPATH, HOME). */
  env: { [name: string]: string | undefined };
  /** Paths of the open workspace folders. */
  workspaceFolders: string[];
  /** Reports whether a path is an executable regular file. */
  isExecutable: (p: string) => boolean;
  /** process.platform; decides the `.exe` suffix and the PATH separator. */
  platform: string;
}

/** Result of findServer. */
export type FindResult =
  | { found: true; path: string; source: string }
  | { found: false; tried: string[]; message: string };

function exeName(platform: string): string {
  return platform === 'win32' ? 'kimi-lsp.exe' : 'kimi-lsp';
}

/** expand replaces a leading `~` and `${workspaceFolder}` in a configured path. */
export function expand(p: string, env: FindOptions['env'], folders: string[]): string {
  let out = p.trim();
  const home = env.HOME ?? env.USERPROFILE ?? '';
  if (home !== '' && (out === '~' || out.startsWith('~/') || out.startsWith('~\\'))) {
    out = path.join(home, out.slice(1));
  }
  if (folders.length > 0) out = out.split('${workspaceFolder}').join(folders[0]);
  return out;
}

/**
 * findServer returns the binary to start. A configured path is used alone:
 * when it does not exist the user is told so rather than silently getting
 * another binary. Otherwise it looks on PATH, in $GOBIN, $GOPATH/bin and
 * ~/go/bin (where `go install` puts it), then for a repository-local build in
 * each workspace folder.
 */
export function findServer(o: FindOptions): FindResult {
  const exe = exeName(o.platform);
  if (o.configured.trim() !== '') {
    const p = expand(o.configured, o.env, o.workspaceFolders);
    if (o.isExecutable(p)) return { found: true, path: p, source: 'kimi.serverPath' };
    const shown = p === o.configured.trim() ? p : `${o.configured.trim()}, that is ${p}`;
    return {
      found: false,
      tried: [`${shown} (kimi.serverPath)`],
      message: missingMessage([shown], true),
    };
  }
  const candidates: Array<[string, string]> = [];
  const sep = o.platform === 'win32' ? ';' : ':';
  for (const dir of (o.env.PATH ?? '').split(sep)) {
    if (dir !== '') candidates.push([path.join(dir, exe), 'PATH']);
  }
  if (o.env.GOBIN) candidates.push([path.join(o.env.GOBIN, exe), 'GOBIN']);
  for (const gp of (o.env.GOPATH ?? '').split(sep)) {
    if (gp !== '') candidates.push([path.join(gp, 'bin', exe), 'GOPATH']);
  }
  const home = o.env.HOME ?? o.env.USERPROFILE;
  if (home) candidates.push([path.join(home, 'go', 'bin', exe), '~/go/bin']);
  for (const f of o.workspaceFolders) {
    candidates.push([path.join(f, exe), 'workspace build']);
    candidates.push([path.join(f, 'bin', exe), 'workspace build']);
  }
  const tried: string[] = [];
  for (const [p, source] of candidates) {
    if (tried.includes(p)) continue;
    tried.push(p);
    if (o.isExecutable(p)) return { found: true, path: p, source };
  }
  return { found: false, tried, message: missingMessage(tried, false) };
}

/**
 * missingMessage says what is missing, where we looked, and the commands
 * that fix it. configured: the path came from "kimi.serverPath" (tried[0]).
 */
export function missingMessage(tried: string[], configured: boolean): string {
  if (configured) {
    return (
      `Kimi: "kimi.serverPath" is set to ${tried[0]}, but no executable kimi-lsp is there. ` +
      `Fix the path, or, in your clone of the kimi-lsp repository, install the server with \`${INSTALL_COMMAND}\` ` +
      `(or build it with \`${LOCAL_BUILD_COMMAND}\`) and point "kimi.serverPath" at it.`
    );
  }
  return (
    'Kimi: the kimi-lsp language server was not found on PATH or in your Go bin directory ' +
    `(looked in ${tried.length} places, listed in the Kimi output). ` +
    `In your clone of the kimi-lsp repository, install it with \`${INSTALL_COMMAND}\` ` +
    `(into your Go bin directory), or build it with \`${LOCAL_BUILD_COMMAND}\` ` +
    'and set "kimi.serverPath" to the result.'
  );
}
