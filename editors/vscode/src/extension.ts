// Extension entry point: starts kimi-lsp through vscode-languageclient, keeps
// the API key in SecretStorage and hands it to the server only through
// initializationOptions, workspace/configuration answers and
// didChangeConfiguration, runs the palette commands as server jobs with a
// progress notification, and shows the running job and the cache hit ratio
// in the status bar.
//
// Activation never waits on the user or on the server: the server starts in
// the background, a notification about a missing binary is shown without
// being awaited, and every command that needs the server says what is
// wrong when there is none.

import * as fs from 'fs';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  LogMessageNotification,
  ResponseError,
  ServerOptions,
  ShowMessageNotification,
  ShowMessageRequest,
  ApplyWorkspaceEditRequest,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
} from 'vscode-languageclient/node';
import { INSTALL_COMMAND, findServer } from './server';
import {
  KimiSection,
  SECRET_KEY,
  SECTION,
  USER_ONLY_KEYS,
  answerConfiguration,
  buildSection,
  ignoredWorkspaceMessage,
  ignoredWorkspaceValue,
  OFF_ONLY_KEYS,
  initializationOptions,
  redact,
  settingValue,
  validateApiKey,
} from './settings';
import {
  FixAction,
  JobTracker,
  NO_KEY_TEXT,
  STATUS_ITEM,
  ProgressValue,
  Stats,
  endNotice,
  endpointNotice,
  errorText,
  fixActions,
  formatStats,
  lastLine,
  menuItems,
  statsItems,
  statusView,
} from './jobs';
import { finalAnswer, logLine, notice, proposedErrors, question, stderrReachesOutput } from './messages';
import { proposedChange } from './hunks';
import { ChangeView } from './changeview';
import { isExplanation, openExplanation } from './preview';
import { CompletionStats, CompletionUI, completionStatsLine } from './completion';
import { RequestRecord, requestItems } from './requests';
import { NextEditUI } from './nextedit';

/** The server commands the palette commands map to. */
const SERVER_COMMANDS = new Set([
  'kimi.explain',
  'kimi.fix',
  'kimi.rewrite',
  'kimi.document',
  'kimi.tests',
  'kimi.review',
  'kimi.action',
]);

const TITLES: { [command: string]: string } = {
  'kimi.explain': 'Kimi: Explain',
  'kimi.fix': 'Kimi: Fix',
  'kimi.rewrite': 'Kimi: Rewrite',
  'kimi.document': 'Kimi: Document',
  'kimi.tests': 'Kimi: Write tests',
  'kimi.review': 'Kimi: Review',
  'kimi.action': 'Kimi',
};

let client: LanguageClient | undefined;
/** startup settles when the last start attempt did: the client, or none. */
let startup: Promise<LanguageClient | undefined> = Promise.resolve(undefined);
/** problem says why there is no server (binary missing, failed to start). */
let problem: string | undefined;
/** statusProblem is the short form of problem the status-bar item shows. */
let statusProblem: string | undefined;
/** endpointTold: the missing key (or keyless endpoint) was said, once a session. */
let endpointTold = false;
let output: vscode.OutputChannel;
let statusItem: vscode.StatusBarItem;
let secrets: vscode.SecretStorage;
let completion: CompletionUI;
let nextEdit: NextEditUI;
const jobs = new JobTracker();
let stats: Stats | undefined;
/** proposed holds the errors of an edit the server asks about, as Problems entries. */
let proposed: vscode.DiagnosticCollection;
/** changeView shows proposed changes (Show the change) and runs the hunk review (edits.confirm). */
let changeView: ChangeView;
/** changeShown settles when the last Show the change has opened its views. */
let changeShown: Promise<void> = Promise.resolve();
let tokenSeq = 0;
/** Cancels, per progress token, the notification shown for it. */
const cancellers = new Map<string, () => void>();

/** warnedIgnored holds the user-only settings already reported as set in a workspace. */
const warnedIgnored = new Set<string>();

function readSetting(key: string): unknown {
  const inspected = vscode.workspace.getConfiguration(SECTION).inspect(key);
  const ignored = ignoredWorkspaceValue(key, inspected);
  if (ignored !== undefined && !warnedIgnored.has(key)) {
    warnedIgnored.add(key);
    const msg = ignoredWorkspaceMessage(key);
    output.appendLine(`[kimi] ${msg}`);
    void vscode.window.showWarningMessage(msg);
  }
  return settingValue(key, inspected);
}

async function currentSection(): Promise<KimiSection> {
  return buildSection(readSetting, await secrets.get(SECRET_KEY), vscode.workspace.isTrusted);
}

/** activate is called by VS Code once startup has finished. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('Kimi');
  secrets = context.secrets;
  // One Kimi item (issue 33 item 19): jobs, cache, inline completion and
  // next edits in its text and tooltip; its click opens the Kimi menu.
  statusItem = vscode.window.createStatusBarItem(STATUS_ITEM.id, vscode.StatusBarAlignment.Right, 100);
  statusItem.name = STATUS_ITEM.name;
  proposed = vscode.languages.createDiagnosticCollection('kimi: proposed edit');
  context.subscriptions.push(output, statusItem, proposed);
  changeView = new ChangeView(vscode, context, (line) => output.appendLine(line));
  completion = new CompletionUI(vscode, SECTION, context, () => refreshStatus());
  nextEdit = new NextEditUI(vscode, SECTION, context, () => refreshStatus());
  refreshStatus();
  statusItem.show();

  const reg = (id: string, fn: (...args: any[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  reg('kimi-lsp.setApiKey', setApiKey);
  reg('kimi-lsp.clearApiKey', clearApiKey);
  reg('kimi-lsp.explainSelection', () => runOnSelection('kimi.explain'));
  reg('kimi-lsp.fix', () => runOnSelection('kimi.fix'));
  reg('kimi-lsp.rewrite', rewrite);
  reg('kimi-lsp.document', () => runOnSelection('kimi.document'));
  reg('kimi-lsp.writeTests', () => runOnSelection('kimi.tests'));
  reg('kimi-lsp.reviewFile', reviewFile);
  reg('kimi-lsp.reviewChanges', reviewChanges);
  reg('kimi-lsp.clearReview', clearReview);
  reg('kimi-lsp.cancel', cancel);
  reg('kimi-lsp.showStats', showStats);
  reg('kimi-lsp.showRequests', showRequests);
  reg('kimi-lsp.showOutput', () => output.show(true));
  reg('kimi-lsp.restartServer', restart);
  reg('kimi-lsp.menu', showMenu);

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration(SECTION)) return;
      for (const key of [...USER_ONLY_KEYS, ...Object.keys(OFF_ONLY_KEYS)]) if (e.affectsConfiguration(`kimi.${key}`)) warnedIgnored.delete(key);
      if (e.affectsConfiguration('kimi.serverPath') || e.affectsConfiguration('kimi.serverArgs')) {
        await restart();
      } else {
        await pushConfiguration();
      }
    }),
    secrets.onDidChange(async (e) => {
      if (e.key !== SECRET_KEY) return;
      // The server's last "no API key" is stale now; it says anew what holds.
      completion.clearStatus();
      await pushConfiguration();
      await refreshStats();
    }),
    // Trust granted while we run (workspaceTrusted goes with the section).
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      await pushConfiguration();
    }),
  );
  // Not awaited: commands work (and say what is wrong) while it starts.
  startup = start();
}

/** deactivate stops the server. */
export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<LanguageClient | undefined> {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const found = findServer({
    configured: String(readSetting('serverPath') ?? ''),
    env: process.env,
    workspaceFolders: folders,
    isExecutable,
    platform: process.platform,
  });
  if (!found.found) {
    output.appendLine(`[kimi] ${found.message}`);
    output.appendLine(`[kimi] looked in: ${found.tried.join(', ')}`);
    setProblem(found.message, 'kimi-lsp was not found');
    tellProblem();
    return undefined;
  }
  setProblem(undefined, undefined);
  output.appendLine(`[kimi] starting ${found.path} (found via ${found.source})`);
  const args = ((readSetting('serverArgs') as string[] | undefined) ?? []).map(String);
  const serverOptions: ServerOptions = {
    run: { command: found.path, args },
    debug: { command: found.path, args },
  };
  const section = await currentSection();
  output.appendLine(`[kimi] configuration: ${JSON.stringify(redact(section))}`);
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    outputChannel: output,
    traceOutputChannel: output,
    initializationOptions: initializationOptions(section),
    middleware: {
      ...completion.middleware(),
      workspace: {
        configuration: async (params, token, next) => {
          const answers = await next(params, token);
          if (answers instanceof ResponseError) return answers;
          return answerConfiguration(params.items, answers as unknown[], await currentSection());
        },
      },
      // Code actions chosen from the light bulb run here too, so every job
      // gets our progress token and shows in the status bar.
      executeCommand: async (command, args, next) => {
        if (SERVER_COMMANDS.has(command)) return runJob(command, args[0] ?? {});
        return next(command, args);
      },
      window: {
        // Explanations open rendered, in the markdown preview beside the
        // code; its "Open Source" button shows the text.
        showDocument: async (params, next) => {
          const uri = vscode.Uri.parse(params.uri);
          if (!isExplanation(uri.scheme, uri.fsPath, params.external)) {
            const r = await next(params, new vscode.CancellationTokenSource().token);
            return r instanceof ResponseError ? { success: false } : r;
          }
          const shown = await openExplanation(previewHost, uri, params.takeFocus ?? false);
          return { success: shown };
        },
      },
    },
  };
  const c = new LanguageClient('kimi-lsp', 'Kimi', serverOptions, clientOptions);
  client = c;
  completion.attach(c);
  nextEdit.attach(c);
  // In place of vscode-languageclient's handlers (see messages.ts): one copy
  // of each server warning in the output, and error notifications with the
  // buttons that fix them.
  const stderrShown = stderrReachesOutput(args);
  c.onNotification(LogMessageNotification.type, (m) => {
    const line = logLine(m, stderrShown);
    if (line !== undefined) output.appendLine(line);
  });
  // The questions that hold a job are modal (issue 33 item 16); asked again
  // after Show the change, once the change is open beside the code.
  c.onRequest(ShowMessageRequest.type, async (p) => {
    const q = question(p.message, (p.actions ?? []).map((a) => a.title));
    const show =
      p.type === 1 ? vscode.window.showErrorMessage : p.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    await changeShown;
    const pick = q.modal ? await show(q.text, { modal: true, detail: q.detail }, ...q.actions) : await show(q.text, ...q.actions);
    if (q.modal && finalAnswer(pick?.title)) {
      proposed.clear();
      await changeView.closeViews();
    }
    return pick ? { title: pick.title } : null;
  });
  // Edits whose hunks need confirmation (edits.confirm): the extension's own
  // review, every hunk ticked (D101); any other edit as the client applies it.
  c.onRequest(ApplyWorkspaceEditRequest.type, (p) =>
    changeView.applyEdit(p as Parameters<ChangeView['applyEdit']>[0], {
      asWorkspaceEdit: (e) => c.protocol2CodeConverter.asWorkspaceEdit(e as Parameters<typeof c.protocol2CodeConverter.asWorkspaceEdit>[0]),
      asUri: (u) => c.protocol2CodeConverter.asUri(u),
    }),
  );
  c.onNotification(ShowMessageNotification.type, (m) => {
    // "Show the errors": they go to the Problems panel, not a toast.
    const pe = proposedErrors(m.message);
    if (pe && showProposed(pe.helpers, pe.errors)) return;
    // "Show the change": a diff editor per file beside the code (D100).
    const pc = proposedChange(m.message);
    if (pc) {
      changeShown = changeView.showChange(pc).catch((err) => {
        output.appendLine(`[kimi] cannot show the proposed change: ${String(err)}`);
      });
      return;
    }
    const n = notice(m);
    if (n.level === 'error' || n.actions.length > 0) tellError(n.text, n.actions, n.level === 'warning' ? 'warning' : 'error');
    else if (n.level === 'warning') void vscode.window.showWarningMessage(n.text);
    else void vscode.window.showInformationMessage(n.text);
  });
  try {
    await c.start();
    refreshStatus();
    void tellEndpoint();
    return c;
  } catch (err) {
    output.appendLine(`[kimi] the server failed to start: ${String(err)}`);
    setProblem(`Kimi: ${found.path} failed to start (${String(err)}); the Kimi output has its log.`, 'kimi-lsp failed to start');
    tellProblem();
    return undefined;
  }
}

/**
 * showProposed puts the errors a proposed edit would bring into the
 * Problems panel (source "kimi: proposed edit", at the lines of the edited
 * text) and opens it; false when none could be placed.
 */
function showProposed(helpers: string, errors: Array<{ path: string; line: number; message: string }>): boolean {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || errors.length === 0) return false;
  const byFile = new Map<string, vscode.Diagnostic[]>();
  for (const e of errors) {
    const uri = vscode.Uri.joinPath(folder.uri, e.path).toString();
    const d = new vscode.Diagnostic(new vscode.Range(e.line - 1, 0, e.line - 1, 1000), `${e.message} (if the proposed edit is applied)`, vscode.DiagnosticSeverity.Error);
    d.source = `kimi: proposed edit, ${helpers}`;
    byFile.set(uri, [...(byFile.get(uri) ?? []), d]);
  }
  proposed.clear();
  for (const [uri, ds] of byFile) proposed.set(vscode.Uri.parse(uri), ds);
  void vscode.commands.executeCommand('workbench.actions.view.problems');
  return true;
}

/** setProblem records why there is no server (undefined: none) for the messages and the status bar. */
function setProblem(message: string | undefined, short: string | undefined): void {
  problem = message;
  statusProblem = short;
  completion.setServerProblem(short);
  refreshStatus();
}

/**
 * tellEndpoint says once a session, after the server started, what is
 * missing for requests to work: no key for the default endpoint (with Set
 * API Key), or that requests to another endpoint go without a key (a
 * local server may need none; issue 33 item 20). Never awaited.
 */
async function tellEndpoint(): Promise<void> {
  if (endpointTold) return;
  const n = endpointNotice((await refreshStats())?.endpoint);
  if (!n) return;
  endpointTold = true;
  output.appendLine(`[kimi] ${n.text}`);
  tellError(n.text, ['Set API Key'], n.level);
}

/** previewHost is openExplanation's window on VS Code. */
const previewHost = {
  executeCommand: (command: string, ...args: unknown[]) => vscode.commands.executeCommand(command, ...args),
  showSourceBeside: async (uri: unknown, preserveFocus: boolean) => {
    const doc = await vscode.workspace.openTextDocument(uri as vscode.Uri);
    return vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preserveFocus, preview: true });
  },
  log: (line: string) => output.appendLine(line),
};

/**
 * tellProblem shows why there is no server, with the buttons that fix it.
 * Never awaited: a notification the user leaves open must not hold up
 * activation or a command.
 */
function tellProblem(): void {
  const msg = problem ?? 'Kimi: the kimi-lsp server is not running (see the Kimi output).';
  void vscode.window.showErrorMessage(msg, 'Copy Install Command', 'Open Settings', 'Show Output').then(async (choice) => {
    if (choice === 'Copy Install Command') {
      await vscode.env.clipboard.writeText(INSTALL_COMMAND);
    } else if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'kimi.serverPath');
    } else if (choice === 'Show Output') {
      output.show(true);
    }
  });
}

/**
 * tellError shows an error with the buttons that fix it (see fixActions);
 * never awaited.
 */
function tellError(text: string, actions: FixAction[], level: 'error' | 'warning' | 'info' = 'error'): void {
  const show =
    level === 'warning' ? vscode.window.showWarningMessage : level === 'info' ? vscode.window.showInformationMessage : vscode.window.showErrorMessage;
  void show(text, ...actions).then(async (choice) => {
    if (choice === 'Set API Key') await setApiKey();
    else if (choice === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'kimi.baseURL');
    else if (choice === 'Show Output') output.show(true);
  });
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  nextEdit?.attach(undefined);
  if (c) {
    try {
      await c.stop();
    } catch (err) {
      output.appendLine(`[kimi] stopping the server: ${String(err)}`);
    }
  }
}

/** restarting settles when the last restart asked for has ended. */
let restarting: Promise<void> = Promise.resolve();

/**
 * restart stops the server (the old kimi-lsp exits, and its helpers with
 * it, before the new one starts) and starts it again. Restarts asked for
 * while one runs (Restart Server twice, a serverPath and a serverArgs
 * change together) wait their turn: two clients never run side by side.
 */
function restart(): Promise<void> {
  restarting = restarting.then(async () => {
    await stop();
    startup = start();
    await startup;
  });
  return restarting;
}

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    if (process.platform === 'win32') return true;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function pushConfiguration(): Promise<void> {
  if (!client || !client.isRunning()) return;
  const section = await currentSection();
  output.appendLine(`[kimi] configuration changed: ${JSON.stringify(redact(section))}`);
  await client.sendNotification(DidChangeConfigurationNotification.type, {
    settings: { [SECTION]: section },
  });
}

async function setApiKey(): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: 'Kimi: Set API Key',
    prompt: 'The key is kept in VS Code\'s secret storage, never in settings.json.',
    password: true,
    ignoreFocusOut: true,
    validateInput: validateApiKey,
  });
  if (key === undefined) return;
  await secrets.store(SECRET_KEY, key.trim());
  void vscode.window.showInformationMessage('Kimi: API key stored.');
}

async function clearApiKey(): Promise<void> {
  await secrets.delete(SECRET_KEY);
  void vscode.window.showInformationMessage('Kimi: API key removed; KIMI_API_KEY or the user config file apply.');
}

/**
 * requireClient returns the running client, waiting for a start under way;
 * without one it tells the user why and returns undefined.
 */
async function requireClient(): Promise<LanguageClient | undefined> {
  await startup;
  if (client && client.isRunning()) return client;
  tellProblem();
  return undefined;
}

/** selectionArgument builds `{uri, range}` for the active editor's selection. */
function selectionArgument(c: LanguageClient): { [k: string]: unknown } | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage('Kimi: open a file and select some code first.');
    return undefined;
  }
  let range: vscode.Range = editor.selection;
  if (range.isEmpty) range = editor.document.lineAt(editor.selection.active.line).range;
  return {
    uri: c.code2ProtocolConverter.asUri(editor.document.uri),
    range: c.code2ProtocolConverter.asRange(range),
  };
}

async function runOnSelection(command: string, extra: { [k: string]: unknown } = {}): Promise<void> {
  const c = await requireClient();
  if (!c) return;
  const arg = selectionArgument(c);
  if (!arg) return;
  if (command === 'kimi.fix') {
    const editor = vscode.window.activeTextEditor!;
    const sel = editor.selection.isEmpty
      ? editor.document.lineAt(editor.selection.active.line).range
      : editor.selection;
    const diags = vscode.languages.getDiagnostics(editor.document.uri).filter((d) => d.range.intersection(sel));
    if (diags.length > 0) arg.diagnostics = await c.code2ProtocolConverter.asDiagnostics(diags);
  }
  await runJob(command, { ...arg, ...extra });
}

/** reviewFile reviews the selection, or the whole file without one. */
async function reviewFile(): Promise<void> {
  const c = await requireClient();
  if (!c) return;
  const arg = selectionArgument(c);
  if (!arg) return;
  const editor = vscode.window.activeTextEditor;
  if (editor && editor.selection.isEmpty) delete arg.range;
  await runJob('kimi.review', arg);
}

/** reviewChanges reviews the uncommitted changes against HEAD. */
async function reviewChanges(): Promise<void> {
  if (!(await requireClient())) return;
  await runJob('kimi.review', { diff: true });
}

/** clearReview clears the findings of the active file (all without one). */
async function clearReview(): Promise<void> {
  const c = await requireClient();
  if (!c) return;
  const uri = vscode.window.activeTextEditor?.document.uri.toString();
  await c.sendRequest('workspace/executeCommand', { command: 'kimi.clearReview', arguments: [uri ? { uri } : {}] });
}

async function rewrite(): Promise<void> {
  if (!(await requireClient())) return; // say what is wrong before asking anything
  const instruction = await vscode.window.showInputBox({
    title: 'Kimi: Rewrite',
    prompt: 'How should the selection be rewritten? (empty: a `kimi:` comment in the selection, or a general clean-up)',
    ignoreFocusOut: true,
  });
  if (instruction === undefined) return;
  await runOnSelection('kimi.rewrite', instruction.trim() === '' ? {} : { instruction: instruction.trim() });
}

/**
 * runJob sends one command with our own work-done token, shows the streamed
 * text in a cancellable notification and the status bar until the server
 * ends the progress, then refreshes the cache stats.
 */
async function runJob(command: string, arg: unknown): Promise<unknown> {
  const c = await requireClient();
  if (!c) return undefined;
  const token = `kimi-vscode-${process.pid}-${++tokenSeq}`;
  let resolveEnd: () => void = () => undefined;
  const ended = new Promise<void>((r) => (resolveEnd = r));
  let report: (message: string) => void = () => undefined;
  const sub = c.onProgress(WorkDoneProgress.type, token, (v) => {
    const value = v as ProgressValue;
    jobs.update(token, value);
    if (value.kind === 'begin' || value.kind === 'report') {
      report(lastLine(value.message ?? '', 120));
    } else if (value.kind === 'end') {
      const title = TITLES[command] ?? command;
      const notice = endNotice(title, value.message);
      // A failure is in the output already: the server logged it.
      if (notice?.level !== 'error') output.appendLine(`[kimi] ${title}: ${value.message ?? 'done'}`);
      if (notice?.level === 'error') tellError(notice.text, notice.actions);
      else if (notice?.level === 'status') vscode.window.setStatusBarMessage(notice.text, 8000);
      else if (notice) void vscode.window.showInformationMessage(notice.text);
      resolveEnd();
    }
    refreshStatus();
  });
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: TITLES[command] ?? command, cancellable: true },
    async (progress, cancelToken) => {
      report = (message) => progress.report({ message });
      const cancelIt = () => {
        void c.sendNotification(WorkDoneProgressCancelNotification.type, { token });
      };
      cancellers.set(token, cancelIt);
      cancelToken.onCancellationRequested(cancelIt);
      await ended;
    },
  );
  let result: unknown;
  try {
    result = await c.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: [arg],
      workDoneToken: token,
    });
    output.appendLine(`[kimi] ${command} started: ${JSON.stringify(result)}`);
  } catch (err) {
    resolveEnd();
    const msg = err instanceof Error ? err.message : String(err);
    output.appendLine(`[kimi] ${command} failed: ${msg}`);
    tellError(errorText(TITLES[command] ?? command, msg), fixActions(msg));
  }
  void ended.then(async () => {
    sub.dispose();
    cancellers.delete(token);
    await refreshStats();
  });
  return result;
}

async function cancel(): Promise<void> {
  const c = await requireClient();
  if (!c) return;
  const running = jobs.running();
  if (running.length === 1) {
    cancellers.get(running[0].token)?.();
    return;
  }
  if (running.length > 1) {
    const pick = await vscode.window.showQuickPick(
      [{ label: 'All jobs', token: '' }].concat(
        running.map((j) => ({ label: j.title, description: lastLine(j.message, 60), token: j.token })),
      ),
      { title: 'Kimi: Cancel' },
    );
    if (!pick) return;
    if (pick.token !== '') {
      cancellers.get(pick.token)?.();
      return;
    }
  }
  // Nothing tracked here (or "All"): ask the server to cancel every job.
  await c.sendRequest(ExecuteCommandRequest.type, { command: 'kimi.cancel', arguments: [{}] });
}

async function refreshStats(): Promise<Stats | undefined> {
  if (!client || !client.isRunning()) return undefined;
  try {
    stats = (await client.sendRequest(ExecuteCommandRequest.type, { command: 'kimi.stats', arguments: [] })) as Stats;
  } catch (err) {
    output.appendLine(`[kimi] kimi.stats failed: ${String(err)}`);
  }
  refreshStatus();
  return stats;
}

async function showStats(): Promise<void> {
  if (!(await requireClient())) return;
  const s = await refreshStats();
  if (!s) return;
  const completions = completionStatsLine(s.completion as CompletionStats | undefined);
  // A quick pick, one figure per line: a notification cut the line short.
  void vscode.window.showQuickPick(statsItems(s, completions), {
    title: 'Kimi: Statistics (this session)',
    placeHolder: formatStats(s),
    matchOnDescription: true,
  });
}

/** showRequests lists what left the machine: the server's kimi.requests. */
async function showRequests(): Promise<void> {
  const c = await requireClient();
  if (!c) return;
  let reply: { requests?: RequestRecord[] } | undefined;
  try {
    reply = (await c.sendRequest(ExecuteCommandRequest.type, { command: 'kimi.requests', arguments: [{ last: 100 }] })) as { requests?: RequestRecord[] };
  } catch (err) {
    output.appendLine(`[kimi] kimi.requests failed: ${String(err)}`);
    void vscode.window.showErrorMessage(`Kimi: the request record could not be read: ${String(err)}`);
    return;
  }
  const records = reply?.requests ?? [];
  if (records.length === 0) {
    void vscode.window.showInformationMessage('Kimi: no requests recorded yet.');
    return;
  }
  void vscode.window.showQuickPick(requestItems(records), {
    title: `Kimi: Recent Requests (${records.length}, newest first; metadata only, never contents)`,
    matchOnDescription: true,
    matchOnDetail: true,
  });
}

function refreshStatus(): void {
  if (!statusItem || !completion || !nextEdit) return;
  const inline = completion.view();
  const view = statusView(jobs.running(), stats, jobs.lastOutcome, {
    problem: statusProblem,
    lines: [inline.line, nextEdit.line()],
    warning: inline.warning,
  });
  statusItem.text = view.text;
  statusItem.tooltip = view.tooltip;
  statusItem.command = view.busy ? 'kimi-lsp.cancel' : 'kimi-lsp.menu';
}

/** showMenu is the Kimi item's click: what its three items did, in one menu. */
async function showMenu(): Promise<void> {
  const items = menuItems({
    busy: jobs.running().length > 0,
    problem: statusProblem !== undefined,
    inlineOn: completion.enabled(),
    nextEditOn: nextEdit.enabled(),
    noKey: stats?.endpoint?.key === false || completion.view().line.includes(NO_KEY_TEXT),
  });
  const pick = await vscode.window.showQuickPick(items, { title: 'Kimi' });
  if (pick) await vscode.commands.executeCommand(pick.command);
}
