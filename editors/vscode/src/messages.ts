// Messages: what of the server's window/logMessage and window/showMessage
// reaches the Kimi output and the notifications. Pure logic, no `vscode`
// import.
//
// Why each server warning was in the output twice: the server writes every
// log record to its stderr, which vscode-languageclient copies into the
// output channel, and it also forwards warnings and errors as
// window/logMessage ("kimi-lsp: …", for editors that show no stderr), which
// vscode-languageclient's default handler writes into the same channel. A
// job failure was there a third time as the extension's own end-of-job
// line. So: the forwarded copy is dropped while the server's stderr reaches
// the channel, and a failed job's end is not written again (the server
// logged it).

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
  const forwarded = (m.type === MessageType.Error || m.type === MessageType.Warning) && m.message.startsWith('kimi-lsp: ');
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
  const text = m.message.replace(/^(kimi-lsp|Kimi):\s*/i, '');
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
