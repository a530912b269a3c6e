// Jobs: follows the `$/progress` stream of the server's jobs and words the
// status-bar item. Pure logic, no `vscode` import.

import { Spend, spendLine } from './requests';

/** A work-done progress value as sent in `$/progress`. */
export interface ProgressValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
  percentage?: number;
  cancellable?: boolean;
}

/** One job as the status bar shows it. */
export interface Job {
  token: string;
  title: string;
  message: string;
  done: boolean;
  outcome?: string;
}

/** The server's `kimi.stats` answer; only the fields the extension reads. */
export interface Stats {
  requests?: number;
  promptTokens?: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
  hitRatio?: number;
  cost?: number;
  /** costUSD is the name kimi-lsp uses for cost; either is read. */
  costUSD?: number;
  /** spend is every surface's spend against the budgets. */
  spend?: Spend;
  /** verify counts the edits the helper language servers checked. */
  verify?: VerifyStats;
  /** trust says, per workspace folder, whether it is trusted. */
  trust?: FolderTrust[];
  /** endpoint says where requests go and whether they carry a key (never the key). */
  endpoint?: { baseURL?: string; default?: boolean; key?: boolean };
  [key: string]: unknown;
}

/** FolderTrust is one workspace folder's trust in kimi.stats. */
export interface FolderTrust {
  folder?: string;
  trusted?: boolean;
  why?: string;
  /** means says what an untrusted folder changes. */
  means?: string;
}

/** VerifyStats is kimi.stats' verify: the edits checked, and the actions whose context the helper's definitions chose. */
export interface VerifyStats {
  verified?: number;
  repaired?: number;
  withNewErrors?: number;
  unverified?: number;
  repairTokens?: number;
  contextActions?: number;
  definitionNames?: number;
  definitionsLocated?: number;
}

/**
 * verifyItems words the verification counts, one line for the edits and
 * one for the context, each only once there is something to count.
 */
export function verifyItems(v: VerifyStats | undefined): StatsItem[] {
  if (!v) return [];
  const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);
  const out: StatsItem[] = [];
  const edits = n(v.verified) + n(v.withNewErrors) + n(v.unverified);
  if (edits > 0) {
    out.push({
      label: `$(check) Verified edits: ${n(v.verified)}`,
      description: `${n(v.repaired)} after a repair (${n(v.repairTokens).toLocaleString('en-US')} tokens), ${n(v.withNewErrors)} with new errors, ${n(v.unverified)} not verified`,
    });
  }
  if (n(v.contextActions) > 0) {
    out.push({
      label: `$(symbol-class) Context from the language server: ${n(v.contextActions)} actions`,
      description: `${n(v.definitionsLocated)} of ${n(v.definitionNames)} names located`,
    });
  }
  return out;
}

/**
 * JobTracker keeps the jobs that are running, fed by progress values, so the
 * status bar can show the newest running job and the last outcome.
 */
export class JobTracker {
  private readonly jobs = new Map<string, Job>();
  private order: string[] = [];
  /** lastOutcome is the end message of the most recent finished job. */
  lastOutcome: string | undefined;

  /** update applies one progress value for a token; returns the job. */
  update(token: string | number, v: ProgressValue): Job | undefined {
    const key = String(token);
    let job = this.jobs.get(key);
    if (v.kind === 'begin') {
      job = { token: key, title: v.title ?? 'Kimi', message: v.message ?? '', done: false };
      this.jobs.set(key, job);
      this.order = this.order.filter((k) => k !== key).concat(key);
      return job;
    }
    if (job === undefined) return undefined;
    if (v.kind === 'report') {
      if (v.message !== undefined) job.message = v.message;
    } else if (v.kind === 'end') {
      job.done = true;
      job.outcome = v.message ?? 'done';
      this.lastOutcome = `${job.title}: ${job.outcome}`;
      this.jobs.delete(key);
      this.order = this.order.filter((k) => k !== key);
    }
    return job;
  }

  /** running lists the running jobs, oldest first. */
  running(): Job[] {
    return this.order.map((k) => this.jobs.get(k)).filter((j): j is Job => j !== undefined);
  }

  /** tokens lists the progress tokens of the running jobs. */
  tokens(): string[] {
    return [...this.order];
  }
}

/**
 * lastLine returns the last non-empty line of a streamed text, shortened
 * from the left. The server may mark line breaks with "⏎" in its one-line
 * progress reports; those count as breaks too.
 */
export function lastLine(text: string, max = 60): string {
  const lines = text.split(/\r?\n|⏎/).map((l) => l.trim()).filter((l) => l !== '');
  const l = lines.length > 0 ? lines[lines.length - 1] : '';
  return l.length > max ? '…' + l.slice(l.length - max + 1) : l;
}

/** hitRatio reads the cache hit ratio from stats, or computes it from the token counts. */
export function hitRatio(s: Stats | undefined): number | undefined {
  if (s === undefined || s === null) return undefined;
  if (typeof s.hitRatio === 'number' && Number.isFinite(s.hitRatio)) return s.hitRatio;
  if (typeof s.promptTokens === 'number' && s.promptTokens > 0 && typeof s.cachedTokens === 'number') {
    return s.cachedTokens / s.promptTokens;
  }
  return undefined;
}

/** percent words a ratio in [0,1] as a whole percentage. */
export function percent(r: number): string {
  return `${Math.round(Math.max(0, Math.min(1, r)) * 100)}%`;
}

/** StatusView is what the status-bar item shows. */
export interface StatusView {
  text: string;
  tooltip: string;
  busy: boolean;
}

/** What the other features add to the Kimi item. */
export interface StatusParts {
  /** problem says why there is no server (the item shows ⚠, click: the output). */
  problem?: string;
  /** lines are the features' tooltip lines (inline completion, next edits). */
  lines?: string[];
  /** warning: a feature is stopped by something the user can fix. */
  warning?: boolean;
}

/**
 * statusView words the one Kimi status-bar item: the running job (with the
 * tail of its streamed text in the tooltip) or "Kimi" when idle, ⚠ while
 * there is no server or a feature is stopped, and the session's cache hit
 * ratio once a prompt was counted (a failed job's request sent no prompt
 * tokens: no "cache 0%"). The tooltip has a line per feature.
 */
export function statusView(running: Job[], stats: Stats | undefined, lastOutcome?: string, parts: StatusParts = {}): StatusView {
  const r = hitRatio(stats);
  const cache = r === undefined || !stats || !stats.requests || !stats.promptTokens ? '' : ` · cache ${percent(r)}`;
  const features = parts.lines ?? [];
  if (parts.problem) {
    return { text: '$(warning) Kimi', tooltip: [`Kimi: ${parts.problem}`, ...features, '(click for the Kimi menu)'].join('\n'), busy: false };
  }
  if (running.length > 0) {
    const job = running[running.length - 1];
    const more = running.length > 1 ? ` (+${running.length - 1})` : '';
    const title = job.title.replace(/^Kimi:\s*/, '');
    const tail = lastLine(job.message, 400);
    return {
      text: `$(sync~spin) Kimi: ${title}${more}${cache}`,
      tooltip: tail === '' ? `${job.title} — running (click to cancel)` : `${job.title} — ${tail}\n(click to cancel)`,
      busy: true,
    };
  }
  const lines = ['Kimi'];
  if (lastOutcome) lines.push(`Last: ${lastOutcome}`);
  if (stats && stats.requests !== undefined) lines.push(formatStats(stats));
  const spend = spendLine(stats?.spend);
  if (spend) lines.push(spend);
  lines.push(...features, '(click for the Kimi menu)');
  return { text: `${parts.warning ? '$(warning)' : '$(sparkle)'} Kimi${cache}`, tooltip: lines.join('\n'), busy: false };
}

/** The Kimi item's id and name (the status bar's menu lists the name). */
export const STATUS_ITEM = { id: 'kimi-lsp.status', name: 'Kimi' };

/** One entry of the Kimi menu (the status-bar item's click). */
export interface MenuItem {
  label: string;
  command: string;
}

/**
 * menuItems lists the Kimi menu: what the item's old three clicks did
 * (cancel, statistics, the two toggles), and the fixes of what it warns about.
 */
export function menuItems(o: { busy: boolean; problem: boolean; inlineOn: boolean; nextEditOn: boolean; noKey: boolean }): MenuItem[] {
  const items: MenuItem[] = [];
  if (o.busy) items.push({ label: '$(circle-slash) Cancel the running job', command: 'kimi-lsp.cancel' });
  if (o.noKey) items.push({ label: '$(key) Set API Key', command: 'kimi-lsp.setApiKey' });
  if (o.problem) items.push({ label: '$(output) Show Output', command: 'kimi-lsp.showOutput' });
  items.push(
    { label: '$(graph) Show Cache Stats', command: 'kimi-lsp.showStats' },
    { label: `$(lightbulb) Turn inline completion ${o.inlineOn ? 'off' : 'on'}`, command: 'kimi-lsp.toggleCompletion' },
    { label: `$(arrow-right) Turn next-edit suggestions ${o.nextEditOn ? 'off' : 'on'}`, command: 'kimi-lsp.toggleNextEdit' },
    { label: '$(debug-restart) Restart Server', command: 'kimi-lsp.restartServer' },
  );
  if (!o.problem) items.push({ label: '$(output) Show Output', command: 'kimi-lsp.showOutput' });
  return items;
}

/** One line of the statistics quick pick. */
export interface StatsItem {
  label: string;
  description?: string;
}

/**
 * statsItems lays a kimi.stats answer out as the lines of a quick pick:
 * one figure per line, nothing cut (a notification truncates long text).
 */
export function statsItems(s: Stats, completionLine = ''): StatsItem[] {
  const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x.toLocaleString('en-US') : '0');
  const r = hitRatio(s);
  const items: StatsItem[] = [
    { label: `$(pulse) Requests: ${n(s.requests)}` },
    {
      label: `$(symbol-number) Prompt tokens: ${n(s.promptTokens)}`,
      description: `${n(s.cachedTokens)} cached, ${n(s.cacheWriteTokens)} written to the cache`,
    },
    { label: `$(database) Cache hit ratio: ${r === undefined ? 'n/a' : percent(r)}`, description: 'prompt tokens served by the provider\'s cache' },
  ];
  const cost = costOf(s);
  if (cost !== undefined) items.push({ label: `$(credit-card) Cost: $${cost.toFixed(4)}`, description: 'at the configured prices' });
  if (completionLine) items.push({ label: '$(lightbulb) Inline completion', description: completionLine });
  const spend = spendLine(s.spend);
  if (spend) items.push({ label: '$(graph) ' + spend, description: 'every surface, across restarts and editors' });
  items.push(...verifyItems(s.verify));
  for (const f of s.trust ?? []) {
    items.push({
      label: `$(${f.trusted ? 'workspace-trusted' : 'workspace-untrusted'}) ${f.folder ?? '?'}: ${f.why ?? '?'}`,
      description: f.trusted ? 'helpers run as the editor would run them' : f.means,
    });
  }
  return items;
}

/** costOf reads the session cost in USD from `cost` or `costUSD`. */
export function costOf(s: Stats): number | undefined {
  if (typeof s.cost === 'number' && Number.isFinite(s.cost)) return s.cost;
  if (typeof s.costUSD === 'number' && Number.isFinite(s.costUSD)) return s.costUSD;
  return undefined;
}

/** formatStats words a stats answer on a few lines for a message or tooltip. */
export function formatStats(s: Stats): string {
  const r = hitRatio(s);
  const parts = [
    `requests ${s.requests ?? 0}`,
    `prompt tokens ${s.promptTokens ?? 0}`,
    `cached ${s.cachedTokens ?? 0}`,
    `cache writes ${s.cacheWriteTokens ?? 0}`,
    `hit ratio ${r === undefined ? 'n/a' : percent(r)}`,
  ];
  const cost = costOf(s);
  if (cost !== undefined) parts.push(`cost $${cost.toFixed(4)}`);
  return parts.join(' · ');
}

/** A message to show when a job ends, beside what the job itself shows. */
export interface EndNotice {
  /** status: a few seconds in the status bar, not a notification. */
  level: 'error' | 'info' | 'status';
  text: string;
  /** actions are the notification's buttons, the one that fixes it first. */
  actions: FixAction[];
}

/** The buttons an error notification may offer. */
export type FixAction = 'Set API Key' | 'Open Settings' | 'Show Output';

/** SET_KEY_HINT is how a VS Code user sets the key, said before the variable. */
export const SET_KEY_HINT =
  'run "Kimi: Set API Key" (kept in VS Code\'s secret storage), or set KIMI_API_KEY in the environment VS Code starts from';

/** NO_KEY_TEXT is how a missing key reads, in notifications and in the status-bar item alike. */
export const NO_KEY_TEXT = `no API key is set: ${SET_KEY_HINT}`;

/**
 * endpointNotice is what to say once at start about where requests go, or
 * undefined when a key is set: no key for the default endpoint (a warning,
 * nothing will be sent), or that requests to another endpoint go without
 * one (information: a local server may need none).
 */
export function endpointNotice(e: Stats['endpoint']): { level: 'warning' | 'info'; text: string } | undefined {
  if (!e || e.key !== false) return undefined;
  if (e.default) return { level: 'warning', text: `Kimi: ${NO_KEY_TEXT}. Until then no request is sent.` };
  return { level: 'info', text: `Kimi: no API key is set, so requests go to ${e.baseURL ?? 'the configured baseURL'} without one (fine for a local server that needs none).` };
}

/**
 * fixActions picks the buttons for an error text from the server: the key
 * for a missing or refused key, the settings for an endpoint that cannot be
 * reached or is not the API, and always the output, which has the log.
 */
export function fixActions(text: string): FixAction[] {
  if (/no API key|refused the API key|API key .*(invalid|control characters)/i.test(text)) return ['Set API Key', 'Show Output'];
  if (/baseURL|could not (connect|reach|get a reply)|not the API|chat-completions API|did not start answering|did not accept a connection|TLS/i.test(text)) {
    return ['Open Settings', 'Show Output'];
  }
  return ['Show Output'];
}

/**
 * errorText words a server error for a VS Code notification: the server
 * names KIMI_API_KEY and the editor settings for a missing key; here the
 * palette command comes first.
 */
export function errorText(title: string, text: string): string {
  if (/\bno API key\b/i.test(text)) return `${title}: ${NO_KEY_TEXT}.`;
  return `${title}: ${text}`;
}

/**
 * endNotice says what to tell the user when a job ends with message, or
 * undefined when its result speaks for itself (an explanation opens). A
 * landed edit is said briefly in the status bar, counted in hunks and files
 * with its verification ("1 hunk in 1 file applied, verified by gopls: no
 * new errors"; issue 33 item 18): the change in the editor does not say
 * whether it was checked. A failure is told with its whole reason; an
 * explanation the server served again for unchanged code opens the same
 * document, which shows nothing new, so that is told too. The server's end
 * messages start "failed: …" or "not applied: …" for failures and say
 * "unchanged code" for a stored explanation.
 */
export function endNotice(title: string, message: string | undefined): EndNotice | undefined {
  const m = (message ?? '').trim();
  // Discarded because the user said so: no error toast (issue 33 item 16).
  if (/\(discarded by your choice\)/.test(m)) return { level: 'status', text: `$(circle-slash) ${title}: ${m}`, actions: [] };
  // Nothing applied because the hunk review said so (hunks.ts reviewRefusal): no error toast either.
  if (/\b(you dismissed the hunk review|you unticked every hunk)\b/.test(m)) {
    return { level: 'status', text: `$(circle-slash) ${title}: ${m.replace(/^not applied: the editor did not apply the edit: /, '')}`, actions: [] };
  }
  if (/^(failed|not applied|error|refused)\b/i.test(m)) return { level: 'error', text: errorText(title, m), actions: fixActions(m) };
  // A cancel the user asked for is confirmed in the status bar, briefly.
  if (/^cancelled\b/i.test(m)) return { level: 'status', text: `$(circle-slash) ${title}: ${m}`, actions: [] };
  // "N hunks in M files applied…" / "the hunk applied…" / "2 of 3 hunks applied…", the token counts left out.
  if (/^(\d+ hunks? in \d+ files? applied|the hunk applied|all \d+ hunks applied|\d+ of \d+ hunks applied)/.test(m)) {
    return { level: 'status', text: `$(check) ${title}: ${m.replace(/\s*\(\d[\d,]* prompt tokens[^)]*\)\s*$/, '')}`, actions: [] };
  }
  if (/unchanged code/i.test(m)) {
    return {
      level: 'info',
      text: `${title}: the code is unchanged since the last explanation, shown again (no model call).`,
      actions: [],
    };
  }
  return undefined;
}
