// Preview: how an explanation file opens. The server writes each
// explanation as Markdown and asks for it with window/showDocument; we show
// it rendered, in the markdown preview beside the code, where the preview's
// own "Open Source" button is one click away from the text. No `vscode`
// import: the calls go through PreviewHost, so `npm test` checks them.

/** The part of the VS Code API openExplanation uses. */
export interface PreviewHost {
  /** vscode.commands.executeCommand. */
  executeCommand(command: string, ...args: unknown[]): PromiseLike<unknown>;
  /** Opens the file as text beside the code (the fallback). */
  showSourceBeside(uri: unknown, preserveFocus: boolean): PromiseLike<unknown>;
  /** Logs a line to the Kimi output. */
  log(line: string): void;
}

/** The built-in markdown extension's command that opens a preview to the side. */
export const PREVIEW_TO_SIDE = 'markdown.showPreviewToSide';

/** isExplanation tells whether a showDocument target is an explanation file. */
export function isExplanation(scheme: string, fsPath: string, external?: boolean): boolean {
  return !external && scheme === 'file' && /\.(md|markdown)$/i.test(fsPath);
}

/**
 * openExplanation shows the Markdown file uri rendered beside the code.
 * Without the markdown extension (disabled, or a build without it) it
 * opens the source beside the code instead. Returns whether it was shown.
 */
export async function openExplanation(host: PreviewHost, uri: unknown, takeFocus: boolean): Promise<boolean> {
  try {
    await host.executeCommand(PREVIEW_TO_SIDE, uri);
    return true;
  } catch (err) {
    host.log(`[kimi] the markdown preview is not available (${String(err)}); opening the source`);
  }
  try {
    await host.showSourceBeside(uri, !takeFocus);
    return true;
  } catch (err) {
    host.log(`[kimi] cannot open the explanation: ${String(err)}`);
    return false;
  }
}
