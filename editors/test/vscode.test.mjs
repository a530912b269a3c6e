// The VS Code extension as a user meets it: the packaged .vsix installed in
// code-server (VS Code in the browser, npm's code-server on Node 24), the
// workbench opened in headless Chromium driven by playwright-core, the real
// kimi-lsp and gopls, and the stand-in provider (fixtures/vscode.json). One
// window goes through activation, Explain, Fix and its undo, Restart Server
// (the old kimi-lsp and its gopls end, the extension keeps working), a next
// edit accepted with Tab, Tab, Review Changes, the "ask" question about an
// edit with new errors (modal, Show the change, Discard) and the hunk
// review of edits.confirm (two ticked entries, one unticked). run.sh's
// vscode-e2e part sets the paths (vscode-e2e.sh installs what it needs).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { KEY, bin, processesOf, startStandin, waitFor, waitGone, workspace } from './lib.mjs';

const require = createRequire(import.meta.url);

/** freePort asks the system for a free loopback port. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** git runs git in dir, quietly, with a fixed identity. */
function git(dir, ...args) {
  execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid', '-c', 'commit.gpgsign=false', ...args], {
    cwd: dir,
    stdio: 'pipe',
  });
}

/** findFile returns the first file under dir whose name ends with suffix. */
function findFile(dir, suffix) {
  if (!existsSync(dir)) return undefined;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      const f = findFile(p, suffix);
      if (f) return f;
    } else if (e.name.endsWith(suffix)) return p;
  }
  return undefined;
}

/** pidsOf lists the pids of the scenario's processes named comm (processesOf). */
function pidsOf(cacheHome, comm) {
  return processesOf(cacheHome)
    .map((l) => l.split(' '))
    .filter(([, c]) => c === comm)
    .map(([pid]) => pid);
}

/** alive says whether pid is still a process (and not a zombie). */
function alive(pid) {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'latin1'));
  } catch {
    return false;
  }
}

test('VS Code (code-server in headless Chromium): activation, Explain, Fix and undo, Restart Server, next edit, Review Changes, the ask question, the hunk review', { timeout: 600000 }, async (t) => {
  const node24 = bin('KIMI_NODE24');
  const codeServer = bin('KIMI_CODE_SERVER');
  const chromiumPath = bin('KIMI_CHROMIUM');
  const vsix = bin('KIMI_VSIX');
  const kimiLsp = bin('KIMI_LSP_BIN');
  const { chromium } = require(process.env.KIMI_PLAYWRIGHT_CORE);

  const w = workspace();
  git(w.ws, 'init', '-q');
  git(w.ws, 'add', '.');
  git(w.ws, 'commit', '-qm', 'start');
  const standin = await startStandin('vscode.json');
  const userData = path.join(w.root, 'user-data');
  const extDir = path.join(w.root, 'extensions');
  const home = path.join(w.root, 'home');
  mkdirSync(path.join(userData, 'User'), { recursive: true });
  mkdirSync(home, { recursive: true });
  // code-server gives extensions the environment of a login shell, whose
  // /etc/profile resets PATH: the user's profile puts gopls back on it, as
  // a Go developer's does.
  writeFileSync(path.join(home, '.profile'), `export PATH='${process.env.PATH.replaceAll("'", "'\\''")}'\n`);
  const settingsFile = path.join(userData, 'User', 'settings.json');
  const settings = {
    'kimi.serverPath': kimiLsp,
    'kimi.baseURL': standin.url,
    'kimi.completion': { enable: false },
    'kimi.nextEdit': { debounceMs: 150 },
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'update.mode': 'none',
    'git.enabled': false,
    'editor.formatOnSave': false,
    'files.autoSave': 'off',
    'chat.disableAIFeatures': true,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
  };
  writeFileSync(settingsFile, JSON.stringify(settings, null, 1));
  const env = {
    ...process.env,
    HOME: home,
    XDG_CACHE_HOME: w.cacheHome,
    XDG_CONFIG_HOME: w.configHome,
    XDG_DATA_HOME: path.join(w.root, 'data'),
    KIMI_API_KEY: KEY,
    SHELL: '/bin/bash',
  };
  // The .vsix the user installs, installed as they would.
  execFileSync(node24, [codeServer, '--user-data-dir', userData, '--extensions-dir', extDir, '--install-extension', vsix], { env, stdio: 'pipe' });

  const port = await freePort();
  const server = spawn(
    node24,
    [
      codeServer,
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--user-data-dir', userData,
      '--extensions-dir', extDir,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      w.ws,
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let serverLog = '';
  server.stdout.on('data', (d) => (serverLog += d));
  server.stderr.on('data', (d) => (serverLog += d));
  const serverExit = new Promise((r) => server.on('exit', r));
  await waitFor(() => serverLog.includes('HTTP server listening'), 60000, `code-server to listen; its log:\n${serverLog}`);

  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const shots = process.env.KIMI_E2E_SHOTS; // a directory: a screenshot after each step
  const shot = async (name) => {
    if (shots) await page.screenshot({ path: path.join(shots, `${name}.png`) });
  };
  const kimiLog = () => {
    const f = findFile(path.join(userData, 'logs'), 'Kimi.log');
    return f ? readFileSync(f, 'utf8') : '';
  };
  const fileText = () => readFileSync(w.file, 'utf8');

  /** palette runs a command from the command palette by its title. */
  const palette = async (title) => {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 20000 });
    await input.fill(`>${title}`);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    await row.waitFor({ state: 'visible', timeout: 20000 });
    await page.keyboard.press('Enter');
  };
  /** editorText is the text the active editor shows (its lines are all drawn: the file is short). */
  const editorText = () =>
    page.evaluate(() => {
      const lines = [...document.querySelectorAll('.editor-group-container.active .monaco-editor .view-lines .view-line')];
      lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
      return lines.map((l) => l.textContent.replaceAll('\u00a0', ' ')).join('\n');
    });
  /**
   * save waits until the editor shows a text for which want holds, saves it,
   * and waits until the file on disk holds it too.
   */
  const save = async (want, what) => {
    await waitFor(async () => want(await editorText()), 60000, `the editor to show ${what}`);
    await page.keyboard.press('Control+s');
    return waitFor(() => (want(fileText()) ? fileText() : false), 20000, `${what} saved; main.go:\n${fileText()}`);
  };
  /** gotoLine puts the cursor at the start of line n (1-based). */
  const gotoLine = async (n) => {
    await page.keyboard.press('Control+g');
    await page.keyboard.type(String(n));
    await page.keyboard.press('Enter');
  };

  /**
   * focusMain puts the keyboard focus in main.go's editor and waits until it
   * holds there: the explanation's preview, opened beside the code, may take
   * the focus back a moment after its tab shows (a webview that loads late,
   * as under CI's load), and keys typed then land nowhere.
   */
  const focusMain = async () => {
    const focused = () =>
      page.evaluate(() => {
        const g = document.querySelector('.editor-group-container.active');
        const tab = g && g.querySelector('.tab.active');
        const ed = g && g.querySelector('.monaco-editor.focused');
        return !!(tab && tab.textContent.trim() === 'main.go' && ed && ed.contains(document.activeElement));
      });
    let held = 0;
    await waitFor(async () => {
      if (!(await focused())) {
        held = 0;
        // Keys sent while the focus was elsewhere may have opened a quick
        // input (Go to Line in a preview is Quick Open), which takes clicks.
        if (await page.locator('.quick-input-widget').isVisible()) await page.keyboard.press('Escape');
        await page.locator('.tab', { hasText: /^main\.go$/ }).first().click();
        await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
        return false;
      }
      // Held over several looks, half a second apart.
      if (++held < 3) {
        await page.waitForTimeout(500);
        return false;
      }
      return true;
    }, 60000, "the keyboard focus in main.go's editor").catch(async (err) => {
      const tabs = await page.evaluate(() => [...document.querySelectorAll('.editor-group-container .tab')].map((t) => JSON.stringify(t.textContent)).join(', '));
      err.message += `; the tabs: ${tabs}`;
      throw err;
    });
  };

  /** step runs one part as a subtest; a failure carries the Kimi output and a screenshot. */
  let stepNo = 0;
  const step = (name, fn) =>
    t.test(name, async () => {
      const n = ++stepNo;
      try {
        await fn();
      } catch (err) {
        await shot(`${n}-failed`).catch(() => undefined);
        err.message += `\n--- Kimi output (last 60 lines):\n${kimiLog().split('\n').slice(-60).join('\n')}`;
        throw err;
      }
    });

  try {
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(w.ws)}`, { waitUntil: 'domcontentloaded', timeout: 120000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 120000 });

    await step('activation: the extension starts kimi-lsp with no error, and the status bar shows Kimi', async () => {
      await waitFor(() => kimiLog().includes('starting ' + kimiLsp), 60000, `the Kimi output to say it starts the server:\n${kimiLog()}`);
      await waitFor(() => pidsOf(w.cacheHome, 'kimi-lsp').length === 1, 30000, 'one kimi-lsp process');
      await page.locator('.statusbar-item', { hasText: 'Kimi' }).first().waitFor({ timeout: 30000 });
      // Open main.go with Quick Open, as a user does.
      await page.keyboard.press('Control+p');
      await page.locator('.quick-input-widget input').fill('main.go');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'main.go' }).first().waitFor({ timeout: 20000 });
      await page.keyboard.press('Enter');
      await page.locator('.tab', { hasText: 'main.go' }).waitFor({ timeout: 20000 });
      await page.locator('.monaco-editor .view-lines').first().click();
      // One Kimi item, where there were three (issue 33 item 19).
      await waitFor(async () => (await page.locator('.statusbar-item', { hasText: /^\W*Kimi/ }).count()) === 1, 20000, 'one Kimi status-bar item');
      await shot('1-activated');
      assert.doesNotMatch(kimiLog(), /failed to start|is not a function|already exists/);
    });

    const explain = async (what) => {
      const before = standin.requests().length;
      await gotoLine(6);
      await palette('Kimi: Explain Selection');
      await waitFor(() => standin.requests().length > before, 30000, `${what}: the explain request`);
      // The explanation opens rendered beside the code: a preview tab.
      await waitFor(async () => (await page.locator('.tab', { hasText: 'explanation' }).count()) > 0, 30000, `${what}: the explanation's preview tab`);
      await waitFor(() => /Kimi: Explain: /.test(kimiLog().split('\n').slice(-40).join('\n')), 30000, `${what}: the end line in the Kimi output`);
    };

    await step('Explain: the explanation streams and opens in the Markdown preview beside the code', async () => {
      await explain('Explain');
      await shot('2-explained');
      const md = findFile(w.cacheHome, 'explanation.md');
      assert.ok(md, 'the explanation file is in the cache directory');
      assert.match(readFileSync(md, 'utf8'), /KIMI-E2E-EXPLANATION/);
    });

    await step('Fix lands in the editor as one edit, verified by gopls; one undo restores the code', async () => {
      // Back to main.go (the preview took the focus beside it).
      await focusMain();
      await gotoLine(7);
      await palette('Kimi: Fix');
      // Said where the user looks, not only in the output (issue 33 item 18):
      // watched from now on, as the message shows for a few seconds.
      const said = waitFor(
        async () => (await page.locator('.statusbar', { hasText: 'Kimi: Fix: 1 hunk in 1 file applied, verified by gopls' }).count()) > 0,
        90000,
        'the status bar to say the fix landed, verified',
      );
      said.catch(() => undefined); // awaited below; no unhandled rejection if a step before fails
      const fixed = await save((s) => s.includes('return a + b'), 'the fix to land');
      assert.equal(fixed, w.text.replace('return a - b', 'return a + b'));
      await shot('3-fixed');
      await waitFor(() => /Kimi: Fix: 1 hunk in 1 file applied, verified by gopls/.test(kimiLog()), 60000, `the Fix end line saying gopls verified it:\n${kimiLog()}`);
      await said;
      await page.locator('.monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+z');
      assert.equal(await save((s) => s.includes('return a - b'), 'the undo'), w.text);
      assert.ok(pidsOf(w.cacheHome, 'gopls').length >= 1, `gopls runs as the helper: ${processesOf(w.cacheHome).join(', ')}`);
    });

    await step('Restart Server: the old kimi-lsp and its gopls end, a new one starts, commands keep working', async () => {
      const oldLsp = pidsOf(w.cacheHome, 'kimi-lsp');
      const oldGopls = pidsOf(w.cacheHome, 'gopls');
      assert.equal(oldLsp.length, 1, processesOf(w.cacheHome).join(', '));
      const logBefore = kimiLog().length;
      await palette('Kimi: Restart Server');
      await waitFor(() => ![...oldLsp, ...oldGopls].some(alive), 30000, `the old kimi-lsp ${oldLsp} and gopls ${oldGopls} to end`);
      await waitFor(() => pidsOf(w.cacheHome, 'kimi-lsp').some((p) => !oldLsp.includes(p)), 30000, 'a new kimi-lsp');
      await waitFor(() => kimiLog().slice(logBefore).includes('starting ' + kimiLsp), 30000, 'the restart in the Kimi output');
      await explain('Explain after the restart');
      const after = kimiLog().slice(logBefore);
      assert.doesNotMatch(after, /is not a function|already exists|initialization failed|stopping the server:/i, after);
      assert.equal(pidsOf(w.cacheHome, 'kimi-lsp').length, 1, `one kimi-lsp: ${processesOf(w.cacheHome).join(', ')}`);
      await shot('4-restarted');
    });

    await step('a next edit is drawn after the rename, Tab jumps to it, Tab applies it', async () => {
      // Rename b to y in Add's signature: line 6 is "func Add(a, b int) int {".
      // Keys that went elsewhere (the focus taken back by the preview after
      // focusMain saw it hold) left the line as it was: then again, twice.
      for (let attempt = 1; ; attempt++) {
        await focusMain();
        await gotoLine(6);
        await page.keyboard.press('End');
        for (let i = 0; i < 'b int) int {'.length; i++) await page.keyboard.press('ArrowLeft');
        await page.keyboard.press('Delete');
        await page.keyboard.type('y');
        const renamed = await waitFor(async () => (await editorText()).includes('func Add(a, y int) int {'), 5000, 'the rename typed in main.go').then(() => true, () => false);
        if (renamed) break;
        const text = await editorText();
        // An empty text: no editor had the focus, the keys changed nothing.
        if (attempt === 3 || (text && !text.includes('func Add(a, b int) int {'))) assert.fail(`the rename was not typed in main.go (attempt ${attempt}); the editor shows:\n${text}`);
      }
      // The suggestion's new text is drawn after the line it replaces
      // (line 7, "return a - b"), not at the start of the next (issue 33
      // item 15): shown() is the 1-based line it is drawn on.
      const shown = async () =>
        page.evaluate(() => {
          const lines = [...document.querySelectorAll('.editor-group-container.active .monaco-editor .view-lines .view-line')];
          lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
          const i = lines.findIndex((l) => [...l.querySelectorAll('span')].some((e) => getComputedStyle(e, '::after').content.includes('return a - y')));
          return i < 0 ? 0 : i + 1;
        });
      await waitFor(shown, 60000, 'the next-edit preview "→ return a - y"').catch(async (err) => {
        const line7 = page.locator('.editor-group-container.active .view-line').nth(6);
        await line7.hover({ position: { x: 5, y: 5 } });
        await page.waitForTimeout(3000);
        const hover = await page.evaluate(() => [...document.querySelectorAll('.monaco-hover')].map((h) => h.textContent).join(' | '));
        err.message += `\n--- hover on line 7: ${hover}`;
        throw err;
      });
      assert.equal(await shown(), 7, 'the preview on the line it replaces');
      const gutterIcon = await page.evaluate(() =>
        [...document.querySelectorAll('.editor-group-container.active .cgmr')].some((e) => getComputedStyle(e).backgroundImage.includes('next-edit.svg')),
      );
      assert.ok(gutterIcon, 'the gutter marker');
      await shot('5-next-edit');
      await gotoLine(2);
      await page.keyboard.press('Tab'); // jump
      await page.keyboard.press('Tab'); // accept
      const done = await save((s) => s.includes('return a - y'), 'the next edit to be applied');
      assert.equal(done, w.text.replace('Add(a, b int)', 'Add(a, y int)').replace('return a - b', 'return a - y'));
    });

    await step('Review Changes: the finding on the changed lines is in the Problems panel', async () => {
      await palette('Kimi: Review Changes');
      await palette('View: Focus Problems (Errors, Warnings, Infos)');
      const problems = page.locator('.markers-panel');
      await waitFor(async () => ((await problems.textContent()) ?? '').includes('KIMI-E2E-FINDING'), 60000, 'the finding in Problems');
      await shot('6-reviewed');
    });

    /**
     * configure edits the User settings as a user does (Preferences: Open
     * User Settings (JSON), the text replaced, saved, closed) and waits until
     * the extension sent them to the server (seen: a pattern of its log line).
     */
    const configure = async (more, seen) => {
      const before = kimiLog().length;
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible', timeout: 20000 });
      await input.fill('>Preferences: Open User Settings (JSON)');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open User Settings (JSON)' }).first().click();
      // VS Code 1.139 opens it in a modal editor, not a tab.
      const editor = page.locator('.monaco-editor', { hasText: 'kimi.serverPath' }).first();
      await editor.waitFor({ state: 'visible', timeout: 20000 });
      await editor.locator('.view-lines').click();
      await page.keyboard.press('Control+a');
      await page.keyboard.insertText(JSON.stringify({ ...settings, ...more }, null, 1));
      await page.keyboard.press('Control+s');
      await waitFor(() => kimiLog().slice(before).split('\n').some((l) => l.includes('configuration changed:') && seen.test(l)), 30000, `the settings ${JSON.stringify(more)} sent to the server`);
      await page.keyboard.press('Control+w');
      await editor.waitFor({ state: 'hidden', timeout: 20000 });
    };
    const dialog = page.locator('.monaco-dialog-box');
    /** buttons are the titles of the modal dialog's buttons. */
    const buttons = async () => (await dialog.locator('.dialog-buttons .monaco-button').allTextContents()).map((t) => t.trim());
    /** toasts are the texts of the notifications shown. */
    const toasts = async () => page.locator('.notifications-toasts .notification-toast').allTextContents();
    const proposedTabs = () => page.locator('.tab', { hasText: 'proposed by Kimi' }).count();

    await step('ask: the new-errors question is modal, Show the change opens the diff beside the code, Discard changes nothing', async () => {
      await configure({ 'kimi.verify.onNewErrors': 'ask' }, /"onNewErrors":"ask"/);
      const before = fileText();
      await focusMain();
      await gotoLine(11); // the stand-in answers a Fix of line 11 with a diff that uses an undefined c
      await palette('Kimi: Fix');
      await dialog.waitFor({ state: 'visible', timeout: 90000 });
      const text = (await dialog.textContent()) ?? '';
      assert.match(text, /Kimi: Fix/, text);
      assert.match(text, /undefined: c/, text);
      assert.doesNotMatch(text, /Kimi: Kimi:/, text);
      assert.deepEqual((await buttons()).sort(), ['Apply anyway', 'Discard', 'Show the change', 'Show the errors'], 'the four answers');
      await shot('7-asked');
      await dialog.locator('.dialog-buttons .monaco-button', { hasText: 'Show the change' }).click();
      // The diff opens beside the code, then the question comes back.
      await waitFor(async () => (await proposedTabs()) === 1, 30000, 'the proposed change in a diff editor tab');
      // Side by side or inline (a narrow group): the proposed line is drawn.
      const diffEditor = page.locator('.monaco-diff-editor').first();
      await waitFor(async () => ((await diffEditor.textContent()) ?? '').replaceAll('\u00a0', ' ').includes('fmt.Println(Add(1, c))'), 30000, 'the diff to show Add(1, c)');
      await dialog.waitFor({ state: 'visible', timeout: 30000 });
      assert.deepEqual((await buttons()).sort(), ['Apply anyway', 'Discard', 'Show the change', 'Show the errors'], 'asked again');
      await shot('8-change-shown');
      await dialog.locator('.dialog-buttons .monaco-button', { hasText: 'Discard' }).click();
      // Said in the status bar, not as an error toast (issue 33 item 16).
      await waitFor(async () => (await page.locator('.statusbar', { hasText: 'discarded by your choice' }).count()) > 0, 60000, 'the status bar to say the edit was discarded');
      assert.deepEqual((await toasts()).filter((t) => /not applied|discarded/i.test(t)), [], 'no error toast');
      await waitFor(async () => (await proposedTabs()) === 0, 30000, 'the diff closed with the answer');
      assert.equal(fileText(), before, 'main.go unchanged on disk');
      assert.doesNotMatch(await editorText(), /Add\(1, c\)/, 'and in the editor');
      assert.match(kimiLog(), /Kimi: Fix: not applied: .*\(discarded by your choice\)/);
    });

    await step('edits.confirm: two hunks are two ticked entries; Escape applies none; unticking one applies exactly the other, "1 of 2 hunks"', async () => {
      await configure({ 'kimi.verify.onNewErrors': 'ask', 'kimi.edits.confirm': 'always' }, /"confirm":"always"/);
      const before = fileText();
      const picker = page.locator('.quick-input-widget');
      const review = async () => {
        await focusMain();
        await gotoLine(10); // the stand-in answers a Fix of line 10 with a two-hunk diff
        await palette('Kimi: Fix');
        await picker.locator('.quick-input-title', { hasText: '2 hunks to apply' }).waitFor({ state: 'visible', timeout: 90000 });
      };
      // Escape: nothing lands, said in the status bar, no error toast.
      await review();
      await page.keyboard.press('Escape');
      await waitFor(async () => (await page.locator('.statusbar', { hasText: 'you dismissed the hunk review' }).count()) > 0, 60000, 'the status bar to say the review was dismissed');
      assert.deepEqual((await toasts()).filter((t) => /not applied|dismissed/i.test(t)), [], 'no error toast');
      await waitFor(async () => (await proposedTabs()) === 0, 30000, 'the diff closed with the review');
      assert.equal(fileText(), before, 'main.go unchanged on disk');
      assert.doesNotMatch(await editorText(), /Add\(2, 3\)|a plus b/, 'and in the editor');
      await review();
      const rows = picker.locator('.quick-input-list .monaco-list-row');
      /** ticks are the rows' labels and whether each is ticked. */
      const ticks = () =>
        rows.evaluateAll((els) =>
          els.map((r) => {
            const box = r.querySelector('input[type=checkbox]');
            const toggle = r.querySelector('.monaco-custom-toggle, .monaco-checkbox');
            const checked = box ? box.checked : toggle ? toggle.classList.contains('checked') || toggle.getAttribute('aria-checked') === 'true' : r.getAttribute('aria-checked') === 'true';
            return [r.querySelector('.label-name, .monaco-icon-label')?.textContent?.trim() ?? r.textContent.trim(), checked];
          }),
        );
      await waitFor(async () => (await rows.count()) === 2, 20000, 'two entries');
      const shown = await ticks();
      assert.deepEqual(shown.map(([, c]) => c), [true, true], `both ticked: ${JSON.stringify(shown)} ${await rows.first().innerHTML()}`);
      assert.match(shown[0][0], /main\.go:5 \(hunk 1 of 2\)/);
      assert.match(shown[1][0], /main\.go:11 \(hunk 2 of 2\)/);
      await waitFor(async () => (await proposedTabs()) === 1, 30000, 'the proposed result in a diff editor tab');
      await shot('9-hunks');
      await rows.first().locator('input[type=checkbox], .monaco-custom-toggle, .monaco-checkbox').first().click();
      await waitFor(async () => JSON.stringify((await ticks()).map(([, c]) => c)) === '[false,true]', 10000, 'hunk 1 unticked');
      await picker.locator('.quick-input-action .monaco-button', { hasText: 'OK' }).click();
      const want = before.replace('Add(1, 2)', 'Add(2, 3)');
      assert.notEqual(want, before);
      assert.equal(await save((t) => t.includes('Add(2, 3)'), 'hunk 2 applied'), want, 'exactly hunk 2 applied');
      await waitFor(() => /Kimi: Fix: 1 of 2 hunks applied/.test(kimiLog()), 60000, 'the end line "1 of 2 hunks"');
      await waitFor(async () => (await proposedTabs()) === 0, 30000, 'the diff closed with the answer');
      await shot('10-hunk-applied');
    });
  } catch (err) {
    await shot('failed').catch(() => undefined);
    throw new Error(`${err.message}\n--- Kimi output:\n${kimiLog()}\n--- code-server:\n${serverLog.slice(-4000)}`);
  } finally {
    await browser.close();
    server.kill('SIGTERM');
    await serverExit;
    standin.stop();
    const left = await waitGone(w.cacheHome, 15000);
    assert.deepEqual(left.filter((l) => /kimi-lsp|gopls/.test(l)), [], 'kimi-lsp and gopls end with the window');
  }
});
