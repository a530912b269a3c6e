// A stand-in for the `vscode` module, enough to activate the extension and
// run its commands under `node --test` (VS Code itself is not run in CI).
// It records what the extension shows. Notifications never settle, as when
// the user leaves them open: an extension that awaits one hangs here as it
// does in VS Code.
import Module = require('module');

/** One thing the extension showed: a notification or an input box. */
export interface Shown {
  kind: 'error' | 'warning' | 'info' | 'inputBox';
  message: string;
  items: string[];
}

/** The fake, with the records the tests read. */
export interface FakeVSCode {
  shown: Shown[];
  commands: Map<string, (...args: unknown[]) => unknown>;
  executed: Array<{ command: string; args: unknown[] }>;
  output: string[];
  /** statusItems are the status-bar items created, as they now look. */
  statusItems: Array<{ id: string; name: string; text: string; tooltip: string; command: string }>;
  /** settings below `kimi.`, by scope. */
  settings: { [key: string]: { globalValue?: unknown; workspaceValue?: unknown } };
  module: { [name: string]: unknown };
}

const never = <T>() => new Promise<T>(() => undefined);

/**
 * installFakeVSCode makes `require('vscode')` return a fake for the rest
 * of the process and returns it.
 */
export function installFakeVSCode(settings: FakeVSCode['settings'] = {}): FakeVSCode {
  const fake: FakeVSCode = { shown: [], commands: new Map(), executed: [], output: [], statusItems: [], settings, module: {} };
  const notify =
    (kind: Shown['kind']) =>
    (message: string, ...items: string[]) => {
      fake.shown.push({ kind, message, items });
      return never();
    };
  const disposable = { dispose: () => undefined };
  class Uri {
    constructor(
      readonly scheme: string,
      readonly fsPath: string,
    ) {}
    static parse(s: string): Uri {
      const u = new URL(s);
      return new Uri(u.protocol.replace(/:$/, ''), decodeURIComponent(u.pathname));
    }
    static file(p: string): Uri {
      return new Uri('file', p);
    }
    toString(): string {
      return `${this.scheme}://${this.fsPath}`;
    }
  }
  // Classes the extension constructs at activation (next edits' decoration
  // colours). They must be real properties: the esbuild bundle copies the
  // module's properties when it loads it, past the Proxy below.
  class ThemeColor {
    constructor(readonly id: string) {}
  }
  class EventEmitter<T> {
    private listeners: Array<(e: T) => unknown> = [];
    event = (l: (e: T) => unknown) => {
      this.listeners.push(l);
      return disposable;
    };
    fire(e: T): void {
      for (const l of this.listeners) l(e);
    }
    dispose(): void {
      this.listeners = [];
    }
  }
  const api: { [name: string]: unknown } = {
    __esModule: true,
    ThemeColor,
    EventEmitter,
    OverviewRulerLane: { Left: 1, Center: 2, Right: 4, Full: 7 },
    Uri,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    ViewColumn: { Active: -1, Beside: -2 },
    window: {
      createOutputChannel: () => ({
        appendLine: (l: string) => fake.output.push(l),
        append: (l: string) => fake.output.push(l),
        show: () => undefined,
        dispose: () => undefined,
      }),
      createStatusBarItem: (id?: unknown) => {
        const item = { id: typeof id === 'string' ? id : '', name: '', text: '', tooltip: '', command: '', show: () => undefined, dispose: () => undefined };
        fake.statusItems.push(item);
        return item;
      },
      showErrorMessage: notify('error'),
      showWarningMessage: notify('warning'),
      showInformationMessage: notify('info'),
      showInputBox: (o: { title?: string; prompt?: string }) => {
        fake.shown.push({ kind: 'inputBox', message: o?.title ?? o?.prompt ?? '', items: [] });
        return Promise.resolve(undefined);
      },
      activeTextEditor: undefined,
      withProgress: () => never(),
      createTextEditorDecorationType: () => ({ dispose: () => undefined }),
      onDidChangeActiveTextEditor: () => disposable,
    },
    languages: {
      onDidChangeDiagnostics: () => disposable,
      getDiagnostics: () => [],
      createDiagnosticCollection: () => ({ set: () => undefined, clear: () => undefined, dispose: () => undefined }),
    },
    commands: {
      registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => {
        fake.commands.set(id, fn);
        return disposable;
      },
      executeCommand: async (command: string, ...args: unknown[]) => {
        fake.executed.push({ command, args });
        const fn = fake.commands.get(command);
        return fn ? fn(...args) : undefined;
      },
    },
    workspace: {
      workspaceFolders: undefined,
      isTrusted: true,
      onDidChangeConfiguration: () => disposable,
      onDidGrantWorkspaceTrust: () => disposable,
      registerTextDocumentContentProvider: () => disposable,
      getConfiguration: () => ({
        get: (key: string) => {
          const s = fake.settings[key];
          return s?.workspaceValue ?? s?.globalValue;
        },
        inspect: (key: string) => ({ key: `kimi.${key}`, ...fake.settings[key] }),
      }),
    },
    env: { clipboard: { writeText: async () => undefined } },
  };
  // vscode-languageclient extends a few classes when it loads; anything
  // else it or the extension touches is a harmless class.
  fake.module = new Proxy(api, {
    get(target, prop) {
      if (!(prop in target)) target[prop as string] = class {};
      return target[prop as string];
    },
  });
  const M = Module as unknown as {
    _resolveFilename: (request: string, ...rest: unknown[]) => string;
    _cache: { [id: string]: unknown };
  };
  const resolve = M._resolveFilename;
  M._resolveFilename = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest);
  };
  require.cache['vscode'] = { id: 'vscode', filename: 'vscode', loaded: true, exports: fake.module } as NodeJS.Module;
  return fake;
}

/** extensionContext is a minimal ExtensionContext with empty secret storage. */
export function extensionContext(): { subscriptions: Array<{ dispose(): unknown }>; secrets: unknown; asAbsolutePath(p: string): string } {
  return {
    subscriptions: [],
    asAbsolutePath: (p: string) => `/extension/${p}`,
    secrets: {
      get: async () => undefined,
      store: async () => undefined,
      delete: async () => undefined,
      onDidChange: () => ({ dispose: () => undefined }),
    },
  };
}
