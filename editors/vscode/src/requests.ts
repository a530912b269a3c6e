// Requests: words the server's record of what left the machine
// (kimi.requests) and the spend against the budgets (kimi.stats' spend).
// Pure logic, no `vscode` import.

/** One file a prompt included, as kimi.requests lists it. */
export interface RequestFile {
  path: string;
  bytes: number;
}

/** One request of kimi.requests: metadata only, never contents. */
export interface RequestRecord {
  time: string;
  surface: string;
  model: string;
  files?: RequestFile[] | null;
  moreFiles?: number;
  promptTokens: number;
  cachedTokens: number;
  writtenTokens: number;
  outputTokens: number;
  costUSD: number;
  unpriced?: boolean;
  estimated?: boolean;
  outcome: string;
}

/** One budget window of kimi.stats' spend. */
export interface SpendWindow {
  name: string;
  spentUSD: number;
  limitUSD: number;
  ends: string;
}

/** kimi.stats' spend: this hour's and today's, against the budgets. */
export interface Spend {
  hour?: SpendWindow;
  day?: SpendWindow;
  capped?: boolean;
  cap?: SpendWindow;
  confirmAboveUSD?: number;
}

/** One line of the requests quick pick. */
export interface RequestItem {
  label: string;
  description: string;
  detail: string;
}

const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x.toLocaleString('en-US') : '0');

/** usd words a cost: four decimals under a dollar, two above. */
export function usd(v: number): string {
  return Math.abs(v) < 1 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`;
}

/** clock words a time as HH:MM:SS (local), or the text as given. */
function clock(t: string): string {
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  const p = (x: number) => String(x).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * requestItems lays kimi.requests out for a quick pick, newest first: the
 * time, surface, model and cost; the tokens and outcome; the files with
 * their sizes.
 */
export function requestItems(records: RequestRecord[]): RequestItem[] {
  return [...records].reverse().map((r) => {
    const cost = r.unpriced ? 'unpriced' : (r.estimated ? '~' : '') + usd(r.costUSD);
    const files = (r.files ?? []).map((f) => `${f.path} (${n(f.bytes)} B)`);
    if (r.moreFiles) files.push(`and ${r.moreFiles} more`);
    return {
      label: `${clock(r.time)}  ${r.surface}  ${cost}`,
      description: `${r.model} · ${n(r.promptTokens)} prompt (${n(r.cachedTokens)} cached, ${n(r.writtenTokens)} written) · ${n(r.outputTokens)} out · ${r.outcome}`,
      detail: files.length > 0 ? files.join(', ') : 'no files',
    };
  });
}

/**
 * spendLine words the spend against the budgets for a tooltip or the
 * statistics: "Spend: $0.0123 this hour (budget $0.50), $0.20 today (no
 * budget)"; "" when the server sent none.
 */
export function spendLine(s: Spend | undefined): string {
  if (!s || !s.hour || !s.day) return '';
  const w = (x: SpendWindow, when: string) =>
    `${usd(x.spentUSD)} ${when} (${x.limitUSD > 0 ? `budget ${usd(x.limitUSD)}` : 'no budget'})`;
  let line = `Spend: ${w(s.hour, 'this hour')}, ${w(s.day, 'today')}`;
  if (s.capped && s.cap) {
    const ends = new Date(s.cap.ends);
    const until = Number.isNaN(ends.getTime()) ? s.cap.ends : ends.toLocaleString();
    line += ` — the ${s.cap.name} budget is spent until ${until}`;
  }
  return line;
}
