// Settings: turns the extension's `kimi.*` settings and the API key kept in
// SecretStorage into the `kimi` configuration section the server reads
// (initializationOptions, workspace/configuration, didChangeConfiguration).
// Pure functions: no `vscode` import, so `npm test` runs them without VS Code.

/**
 * Keys of the server's `kimi` section that the extension mirrors as
 * settings. A dotted key (`verify.enable`, the setting `kimi.verify.enable`)
 * is sent nested (`{"verify": {"enable": …}}`).
 */
export const SECTION_KEYS = [
  'baseURL',
  'model',
  'fastModel',
  'reasoningEffort',
  'maxCompletionTokens',
  'cacheTTL',
  'actions',
  'context',
  'progress',
  'logLevel',
  'completion',
  'nextEdit',
  'verify.enable',
  'verify.onNewErrors',
  'verify.idleMinutes',
  'verify.servers',
  'edits.confirm',
  'budget.hourly',
  'budget.daily',
  'budget.confirmAbove',
] as const;

/** Name of the configuration section shared by the extension and the server. */
export const SECTION = 'kimi';

/** Key under which the API key is kept in VS Code's SecretStorage. */
export const SECRET_KEY = 'kimi-lsp.apiKey';

/** The `kimi` configuration section as the server reads it. */
export type KimiSection = { [key: string]: unknown };

/** Reads one setting below `kimi.`; returns undefined when unset. */
export type SettingReader = (key: string) => unknown;

/**
 * Settings read from the user's settings only (User, or Remote on a remote
 * machine), never from a workspace's: a repository's .vscode/settings.json
 * must not send your key and your code to another host (baseURL), choose a
 * program for kimi-lsp to run (verify.servers), nor raise your budgets
 * (budget.*). The server trusts editor settings for all of them, as it
 * trusts the user config file (a workspace .kimi-lsp.toml may only lower a
 * budget), so the extension is where a workspace's value is left out.
 */
export const USER_ONLY_KEYS: readonly string[] = [
  'baseURL',
  'verify.servers',
  'budget.hourly',
  'budget.daily',
  'budget.confirmAbove',
];

/**
 * Settings a workspace may only turn off: `kimi.verify.enable` starts helper
 * language servers in the folder, which a repository must not ask for; its
 * `"off"` is taken from a workspace's settings, any other value from the
 * user's only (as the server does with a workspace .kimi-lsp.toml).
 */
export const OFF_ONLY_KEYS: { readonly [key: string]: unknown } = { 'verify.enable': 'off' };

/** What `WorkspaceConfiguration.inspect` returns, the fields used here. */
export interface Inspected {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * settingValue picks the value of setting key from what inspect returned:
 * for a user-only key the user's value (else the default), for the others
 * the most specific one, as `get` does.
 */
export function settingValue(key: string, i: Inspected | undefined): unknown {
  if (i === undefined) return undefined;
  if (USER_ONLY_KEYS.includes(key)) return i.globalValue ?? i.defaultValue;
  if (key in OFF_ONLY_KEYS) {
    const ws = i.workspaceFolderValue ?? i.workspaceValue;
    if (ws === OFF_ONLY_KEYS[key]) return ws;
    return i.globalValue ?? i.defaultValue;
  }
  return i.workspaceFolderValue ?? i.workspaceValue ?? i.globalValue ?? i.defaultValue;
}

/**
 * ignoredWorkspaceValue returns the workspace-level value of a user-only
 * setting that settingValue left out (undefined when there is none), so the
 * user can be told.
 */
export function ignoredWorkspaceValue(key: string, i: Inspected | undefined): unknown {
  if (i === undefined) return undefined;
  const ws = i.workspaceFolderValue ?? i.workspaceValue;
  if (key in OFF_ONLY_KEYS) return ws === OFF_ONLY_KEYS[key] ? undefined : ws;
  if (!USER_ONLY_KEYS.includes(key)) return undefined;
  return ws;
}

/**
 * ignoredWorkspaceMessage is the warning shown once when a workspace sets a
 * user-only setting (key below `kimi.`); for a budget it names the file a
 * repository may lower one in.
 */
export function ignoredWorkspaceMessage(key: string): string {
  if (key in OFF_ONLY_KEYS) {
    return `Kimi: "kimi.${key}" in workspace settings may only be "${String(OFF_ONLY_KEYS[key])}" (a repository must not start programs in your folder); set it in your User (or Remote) settings.`;
  }
  const msg = `Kimi: "kimi.${key}" in workspace settings is ignored; set it in your User (or Remote) settings`;
  if (key.startsWith('budget.')) {
    return `${msg}. A workspace's .kimi-lsp.toml may lower ${key} below your user config file's, never raise it.`;
  }
  return `${msg}.`;
}

/**
 * isEmpty tells whether a setting value means "let the server decide":
 * undefined, null, an empty string, an empty array or an empty object.
 */
export function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'string') return v.trim() === '';
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v as object).length === 0;
  return false;
}

/**
 * buildSection builds the `kimi` section from the settings and the API key.
 * Empty settings are left out so the server's own defaults, its user file
 * and the environment (KIMI_API_KEY, KIMI_BASE_URL, KIMI_MODEL) still apply:
 * the precedence is defaults < user file < environment < editor settings.
 * The key is added only when one is stored; it never comes from settings.json.
 * trusted is VS Code's workspace trust (workspace.isTrusted), sent as
 * workspaceTrusted: the server then lets its helpers run unrestricted.
 */
export function buildSection(read: SettingReader, apiKey?: string, trusted?: boolean): KimiSection {
  const out: KimiSection = {};
  for (const key of SECTION_KEYS) {
    const v = read(key);
    if (isEmpty(v)) continue;
    const path = key.split('.');
    let at = out;
    for (const name of path.slice(0, -1)) {
      if (typeof at[name] !== 'object' || at[name] === null) at[name] = {};
      at = at[name] as KimiSection;
    }
    at[path[path.length - 1]] = typeof v === 'string' ? v.trim() : v;
  }
  if (apiKey !== undefined && apiKey.trim() !== '') out.apiKey = apiKey.trim();
  // VS Code's own workspace trust, never a setting: a repository's
  // .vscode/settings.json cannot say it is trusted.
  if (trusted !== undefined) out.workspaceTrusted = trusted;
  return out;
}

/** initializationOptions wraps the section as `{ kimi: {...} }`. */
export function initializationOptions(section: KimiSection): { [SECTION]: KimiSection } {
  return { [SECTION]: section };
}

/** One item of a workspace/configuration request. */
export interface ConfigurationItem {
  scopeUri?: string;
  section?: string;
}

/**
 * answerConfiguration completes the client library's answer to a
 * workspace/configuration request: for every item asking for the `kimi`
 * section (or a key inside it, like `kimi.model`) it returns the section
 * built from the settings and the secret key, so the key reaches the server
 * without ever being written to settings.json (a dotted key, `kimi.verify.enable`,
 * is looked up in the nested section). Other items keep the library's
 * answer.
 */
export function answerConfiguration(
  items: ConfigurationItem[],
  answers: unknown[],
  section: KimiSection,
): unknown[] {
  return items.map((item, i) => {
    const name = item.section ?? '';
    if (name === SECTION) return section;
    if (name.startsWith(SECTION + '.')) {
      let v: unknown = section;
      for (const part of name.slice(SECTION.length + 1).split('.')) {
        v = typeof v === 'object' && v !== null ? (v as KimiSection)[part] : undefined;
      }
      return v === undefined ? null : v;
    }
    return i < answers.length ? answers[i] : null;
  });
}

/**
 * redact returns a copy of the section fit for logs: the key, when present,
 * is replaced by a marker that says only that one is set.
 */
export function redact(section: KimiSection): KimiSection {
  const copy: KimiSection = { ...section };
  if ('apiKey' in copy) copy.apiKey = '<set>';
  return copy;
}

/**
 * validateApiKey checks text typed into the "Kimi: Set API Key" box and
 * returns an error message, or undefined when it is acceptable. It never
 * echoes the key.
 */
export function validateApiKey(text: string): string | undefined {
  const t = text.trim();
  if (t === '') return 'The key is empty.';
  if (/\s/.test(t)) return 'The key must not contain spaces or line breaks.';
  if (t.length < 8) return 'The key looks too short.';
  return undefined;
}
