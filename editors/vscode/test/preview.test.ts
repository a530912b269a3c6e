import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { PREVIEW_TO_SIDE, PreviewHost, isExplanation, openExplanation } from '../src/preview';

function host(previewWorks: boolean): PreviewHost & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    executeCommand: async (command: string, ...args: unknown[]) => {
      calls.push(`${command} ${String(args[0])}`);
      if (!previewWorks) throw new Error(`command '${command}' not found`);
      return undefined;
    },
    showSourceBeside: async (uri: unknown, preserveFocus: boolean) => {
      calls.push(`source ${String(uri)} preserveFocus=${preserveFocus}`);
      return undefined;
    },
    log: () => undefined,
  };
}

test('an explanation opens as the rendered preview beside the code, not as its source', async () => {
  const h = host(true);
  assert.equal(await openExplanation(h, 'file:///cache/kimi-lsp/explanations/a.md', false), true);
  assert.deepEqual(h.calls, [`${PREVIEW_TO_SIDE} file:///cache/kimi-lsp/explanations/a.md`]);
});

test('without the markdown extension the source opens beside the code, keeping focus', async () => {
  const h = host(false);
  assert.equal(await openExplanation(h, 'file:///x/a.md', false), true);
  assert.deepEqual(h.calls, [`${PREVIEW_TO_SIDE} file:///x/a.md`, 'source file:///x/a.md preserveFocus=true']);
});

test('only Markdown files on disk are explanations', () => {
  assert.equal(isExplanation('file', '/c/kimi-lsp/explanations/a.md'), true);
  assert.equal(isExplanation('file', '/c/a.MARKDOWN'), true);
  assert.equal(isExplanation('file', '/ws/main.go'), false);
  assert.equal(isExplanation('untitled', 'a.md'), false);
  assert.equal(isExplanation('file', '/c/a.md', true), false);
});
