// Inline completion: Kimi's ghost text through vscode-languageclient's
// LSP 3.18 textDocument/inlineCompletion support (a "proposed" feature in
// vscode-languageclient 9, registered with registerProposedFeatures), a
// status-bar toggle, and the server's `$/kimi/completionStatus` in that
// item. VS Code's `editor.inlineSuggest.enabled` and the `kimi.completion`
// settings are honoured before any request is sent.
//
// The `vscode` module is passed in (only its types are imported), so the
// pure parts below run under `node --test` without VS Code.

import type * as vscode from 'vscode';
import type { StaticFeature } from 'vscode-languageclient';
import { NO_KEY_TEXT } from './jobs';

/** The toggle command and the setting it flips. */
export const TOGGLE_COMMAND = 'kimi-lsp.toggleCompletion';
export const ENABLE_SETTING = 'completion.enable';

/** The server's status notification (sent to clients that opt in). */
export const STATUS_NOTIFICATION = '$/kimi/completionStatus';

/** What `$/kimi/completionStatus` carries. */
export interface CompletionStatus {
  state: 'ok' | 'error' | 'noKey' | string;
  message?: string;
}

/**
 * shouldRequest says whether an inline completion request goes to the
 * server: the user's `kimi.completion.enable` (default true) and VS Code's
 * `editor.inlineSuggest.enabled` (default true) must both allow it.
 */
export function shouldRequest(kimiEnabled: unknown, inlineSuggestEnabled: unknown): boolean {
  return kimiEnabled !== false && inlineSuggestEnabled !== false;
}

/**
 * toggled returns the user's `kimi.completion` object with enable set, the
 * other keys kept.
 */
export function toggled(current: { [k: string]: unknown } | undefined, enable: boolean): { [k: string]: unknown } {
  return { ...(current ?? {}), enable };
}

/** The `completion` part of kimi.stats (only the fields shown). */
export interface CompletionStats {
  requested?: number;
  shown?: number;
  reused?: number;
  providerRequests?: number;
  hitRatio?: number;
  costUSD?: number;
}

/** completionStatsLine words kimi.stats' completion figures ('' when there were none). */
export function completionStatsLine(c: CompletionStats | undefined): string {
  if (!c || !c.requested) return '';
  const parts = [`completions ${c.requested} asked`, `${c.shown ?? 0} shown`, `${c.reused ?? 0} reused`, `${c.providerRequests ?? 0} provider requests`];
  if (typeof c.hitRatio === 'number' && (c.providerRequests ?? 0) > 0) parts.push(`hit ratio ${Math.round(c.hitRatio * 100)}%`);
  if (typeof c.costUSD === 'number') parts.push(`cost $${c.costUSD.toFixed(4)}`);
  return parts.join(' · ');
}

/** How inline completion is doing, as the Kimi status-bar item shows it. */
export interface CompletionView {
  /** line is the item's tooltip line ("Inline completion: on"). */
  line: string;
  /** warning: something stops it that the user can fix (the item shows ⚠). */
  warning: boolean;
}

/**
 * completionView words inline completion in the Kimi item: on, off, off
 * because VS Code's inline suggestions are off, no server, or on with a
 * problem the server reported. A missing key reads as in the error
 * notifications (NO_KEY_TEXT), pointing to Set API Key.
 */
export function completionView(kimiEnabled: boolean, inlineSuggestEnabled: boolean, status?: CompletionStatus, serverProblem?: string): CompletionView {
  if (!kimiEnabled) return { line: 'Inline completion: off', warning: false };
  if (!inlineSuggestEnabled) return { line: "Inline completion: on, but VS Code's editor.inlineSuggest.enabled is off", warning: false };
  if (serverProblem) return { line: `Inline completion: on, but ${serverProblem}`, warning: true };
  if (status && status.state !== 'ok') {
    const why = status.state === 'noKey' ? NO_KEY_TEXT : status.message || status.state;
    return { line: `Inline completion: ${why}`, warning: true };
  }
  return { line: 'Inline completion: on', warning: false };
}

/**
 * statusFeature is the static feature that asks the server for its
 * completion status. Typed as vscode-languageclient's StaticFeature, so a
 * method the client calls cannot be missing: stopping the client (Restart
 * Server, a new kimi.serverPath) calls clear() on every feature, and a
 * feature without it threw there, before the client had unregistered its
 * commands or told the server to exit (issue 33 item 13).
 */
export function statusFeature(): StaticFeature {
  return {
    fillClientCapabilities(caps) {
      const c = caps as { experimental?: { [k: string]: unknown } };
      c.experimental = { ...(c.experimental ?? {}), kimiCompletionStatus: true };
    },
    initialize() {},
    getState() {
      return { kind: 'static' };
    },
    clear() {},
  };
}

/** The parts of vscode-languageclient's client this module uses. */
export interface CompletionClient {
  registerProposedFeatures(): void;
  registerFeature(feature: StaticFeature): void;
  onNotification(method: string, handler: (params: CompletionStatus) => void): unknown;
}

/**
 * CompletionUI owns the toggle and the status of inline completion, which
 * the one Kimi status-bar item shows (view()). Create it once in activate;
 * call attach for every new LanguageClient before it starts, and use
 * middleware() in the client options. onChange is called when view() may
 * have changed.
 */
export class CompletionUI {
  private status: CompletionStatus | undefined;
  private serverProblem: string | undefined;

  constructor(
    private readonly code: typeof vscode,
    private readonly section: string,
    context: vscode.ExtensionContext,
    private readonly onChange: () => void = () => undefined,
  ) {
    context.subscriptions.push(
      code.commands.registerCommand(TOGGLE_COMMAND, () => this.toggle()),
      code.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${section}.${ENABLE_SETTING}`) || e.affectsConfiguration('editor.inlineSuggest.enabled')) {
          this.onChange();
        }
      }),
    );
  }

  /** enabled reads kimi.completion.enable (default on). */
  enabled(): boolean {
    return this.code.workspace.getConfiguration(this.section).get(ENABLE_SETTING) !== false;
  }

  private inlineSuggest(): boolean {
    return this.code.workspace.getConfiguration('editor').get('inlineSuggest.enabled') !== false;
  }

  /** view is how inline completion is doing now. */
  view(): CompletionView {
    return completionView(this.enabled(), this.inlineSuggest(), this.status, this.serverProblem);
  }

  /**
   * setServerProblem says why there is no server (undefined: it runs); the
   * server's last status is dropped either way, a new server sends its own.
   */
  setServerProblem(problem: string | undefined): void {
    this.serverProblem = problem;
    this.status = undefined;
    this.onChange();
  }

  /** clearStatus drops the server's last status (a new key was set: the old reason is stale). */
  clearStatus(): void {
    this.status = undefined;
    this.onChange();
  }

  /** toggle flips kimi.completion.enable in the user settings. */
  async toggle(): Promise<void> {
    const cfg = this.code.workspace.getConfiguration(this.section);
    const global = cfg.inspect<{ [k: string]: unknown }>('completion')?.globalValue;
    await cfg.update('completion', toggled(global, !this.enabled()), this.code.ConfigurationTarget.Global);
    this.status = undefined;
    this.onChange();
  }

  /**
   * attach turns inline completion on for a client before it starts: the
   * LSP 3.18 feature, the experimental capability that asks the server for
   * its status, and the status handler.
   */
  attach(client: CompletionClient): void {
    client.registerProposedFeatures();
    client.registerFeature(statusFeature());
    client.onNotification(STATUS_NOTIFICATION, (s) => {
      this.status = s;
      this.onChange();
    });
  }

  /**
   * middleware is the client option's provideInlineCompletionItems: no
   * request while completion or VS Code's inline suggestions are off.
   */
  middleware(): {
    provideInlineCompletionItems: (
      document: vscode.TextDocument,
      position: vscode.Position,
      context: vscode.InlineCompletionContext,
      token: vscode.CancellationToken,
      next: (
        document: vscode.TextDocument,
        position: vscode.Position,
        context: vscode.InlineCompletionContext,
        token: vscode.CancellationToken,
      ) => vscode.ProviderResult<vscode.InlineCompletionItem[] | vscode.InlineCompletionList>,
    ) => vscode.ProviderResult<vscode.InlineCompletionItem[] | vscode.InlineCompletionList>;
  } {
    return {
      provideInlineCompletionItems: (document, position, context, token, next) => {
        if (!shouldRequest(this.enabled(), this.inlineSuggest())) return null;
        return next(document, position, context, token);
      },
    };
  }
}
