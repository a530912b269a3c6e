// Messages: what of the server's window/logMessage and window/showMessage
// reaches the Kimi output and the notifications. Pure logic, no `vscode`
// import.
//
// Why each server error was in the output twice: the server writes its
// errors to its stderr (the rest of its log too, with --log-file), which
// vscode-languageclient copies into the output channel, and it also sends
// every record as window/logMessage ("kimi-lsp: …"), which
// vscode-languageclient's default handler writes into the same channel. A
// job failure was there a third time as the extension's own end-of-job
// line. So: the forwarded copy of an error is dropped while the server's
// stderr reaches the channel (warnings and information reach it only as
// window/logMessage), and a failed job's end is not written again (the
// server logged it).

import { FixAction, errorText, fixActions } from './jobs';

/** LSP's MessageType. */
export const enum MessageType {
  Error = 1,
  Warning = 2,
  Info = 3,
  Log = 4,
  Debug = 5,
}

/** A window/logMessage or window/showMessage's params. */
export interface ServerMessage {
  type: number;
  message: string;
}

/**
 * stderrReachesOutput says whether the server's log goes to its stderr
 * (and so into the output channel): unless serverArgs send it to a file.
 */
export function stderrReachesOutput(serverArgs: string[]): boolean {
  return !serverArgs.some((a) => /^--?log-file(=|$)/.test(a));
}

/**
 * logLine is the output line for a window/logMessage, or undefined when the
 * same text is already in the output through the server's stderr.
 */
export function logLine(m: ServerMessage, stderrShown: boolean): string | undefined {
  const forwarded = m.type === MessageType.Error && m.message.startsWith('kimi-lsp: ');
  if (forwarded && stderrShown) return undefined;
  const tag = ['', 'Error', 'Warn', 'Info', 'Log', 'Debug'][m.type] ?? 'Log';
  return `[server ${tag}] ${m.message}`;
}

/** How a window/showMessage is shown. */
export interface Notice {
  level: 'error' | 'warning' | 'info';
  text: string;
  actions: FixAction[];
}

/**
 * notice words a window/showMessage: errors and warnings get the buttons
 * that fix them (a missing key names Kimi: Set API Key first); information
 * is shown as it is.
 */
export function notice(m: ServerMessage): Notice {
  // The server's own messages start "Kimi: " or "kimi-lsp: ": said once.
  const text = m.message.replace(/^((kimi-lsp|Kimi):\s*)+/i, '');
  if (m.type === MessageType.Error || m.type === MessageType.Warning) {
    const actions = fixActions(text);
    return {
      level: m.type === MessageType.Error ? 'error' : 'warning',
      text: /\bno API key\b/i.test(text) ? errorText('Kimi', text) : `Kimi: ${text}`,
      actions: actions.length === 1 && actions[0] === 'Show Output' && m.type === MessageType.Warning ? [] : actions,
    };
  }
  return { level: 'info', text: m.message, actions: [] };
}

/**
 * The titles by which the server's question about an edit that brings new
 * errors is known (it also offers Show the errors and Show the change; the
 * set may grow, so the question is known by these two).
 */
export const NEW_ERRORS_ACTIONS = ['Apply anyway', 'Discard'];
/** The titles by which the server's question before a costly or over-budget request is known. */
export const SEND_ACTIONS = ['Send', 'Cancel'];
/** The answers to the new-errors question that show something and are asked again. */
export const SHOW_ACTIONS = ['Show the errors', 'Show the change'];

/**
 * finalAnswer says whether an answer to a question ends it (the server asks
 * again after Show the errors or Show the change).
 */
export function finalAnswer(title: string | undefined): boolean {
  return title === undefined || !SHOW_ACTIONS.includes(title);
}

/** How a window/showMessageRequest is asked. */
export interface Question {
  /** modal: the server waits on the answer (up to 10 minutes): it must not be missed. */
  modal: boolean;
  text: string;
  detail?: string;
  /** actions keep the server's titles; the closing one answers Escape. */
  actions: Array<{ title: string; isCloseAffordance?: boolean }>;
}

/**
 * question words a window/showMessageRequest. The server's two questions
 * that hold a job (an edit that brings new errors, a request to send:
 * known by their titles holding Apply anyway and Discard, or Send and
 * Cancel, whatever else they offer) are modal, with the text once
 * prefixed "Kimi:" and Discard or Cancel as the dialog's close button; any
 * other is asked as it is.
 */
export function question(message: string, titles: string[]): Question {
  const has = (want: string[]) => want.every((t) => titles.includes(t));
  const close = has(NEW_ERRORS_ACTIONS) ? 'Discard' : has(SEND_ACTIONS) ? 'Cancel' : undefined;
  if (!close) return { modal: false, text: message, actions: titles.map((title) => ({ title })) };
  const body = message.replace(/^((kimi-lsp|Kimi):\s*)+/i, '');
  const cut = body.indexOf(' — ');
  const text = cut > 0 ? `Kimi: ${body.slice(0, cut)}` : `Kimi: ${body}`;
  const detail = cut > 0 ? body.slice(cut + 3) : undefined;
  return { modal: true, text, detail, actions: titles.map((title) => ({ title, isCloseAffordance: title === close })) };
}

/** One error of the server's "the errors the edit brings" message. */
export interface ProposedError {
  path: string;
  line: number; // 1-based
  message: string;
}

/**
 * proposedErrors reads the server's answer to "Show the errors" ("Kimi:
 * the errors the edit brings (gopls):" then a "path:line: message" line
 * each), or undefined for any other message.
 */
export function proposedErrors(message: string): { helpers: string; errors: ProposedError[] } | undefined {
  const m = /^(?:Kimi: )?the errors the edit brings \(([^)]*)\):/.exec(message);
  if (!m) return undefined;
  const errors: ProposedError[] = [];
  for (const l of message.split('\n').slice(1)) {
    const e = /^(.+?):(\d+): (.*)$/.exec(l);
    if (e) errors.push({ path: e[1], line: Number(e[2]), message: e[3] });
  }
  return { helpers: m[1], errors };
}
