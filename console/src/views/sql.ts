import { api, describeError } from '../api';
import { h } from '../dom';
import { session } from '../session';
import type { QueriesResult, Row, SavedInsight } from '../types';
import { resultChart } from '../ui/chart';
import { download, toCsv } from '../ui/download';
import { formatCount } from '../ui/format';
import { currentRoute } from '../ui/hash';
import { notice } from '../ui/notice';
import { promptText } from '../ui/prompt';
import { sqlEditor } from '../ui/sql-editor';
import { virtualTable } from '../ui/table';
import { loadCompletions } from './sql-completions';
import { readHistory, remember, type HistoryEntry } from './sql-history';

const FIRST_STATEMENT = `SELECT toStartOfHour(timestamp) AS hour, count() AS events
FROM events
WHERE timestamp > now() - INTERVAL 7 DAY
GROUP BY hour
ORDER BY hour`;

/** The columns of a result, in the order the statement named them. */
const columnsOf = (rows: readonly Row[]) => (rows[0] ? Object.keys(rows[0]) : []);

/**
 * SQL: a ClickHouse editor (Ctrl/Cmd+Enter runs), the result as a table or a chart, CSV and JSON
 * downloads, and this workspace's recent statements.
 */
export function sqlView(root: HTMLElement): () => void {
  const workspaceId = session()!.identity.workspace.workspaceId;
  const editorBox = h('div', { class: 'editor' });
  const runButton = h('button', { type: 'button', class: 'primary', 'aria-keyshortcuts': 'Control+Enter Meta+Enter' }, 'Run', h('kbd', {}, navigator.platform.startsWith('Mac') ? '⌘↵' : 'Ctrl ↵'));
  const status = h('span', { class: 'muted', role: 'status' });
  const saveButton = h('button', { type: 'button', class: 'secondary', title: 'Save the statement as an insight, to put it on a dashboard' }, 'Save…');
  const tableTab = h('button', { type: 'button', role: 'tab', class: 'tab', 'aria-selected': 'true' }, 'Table');
  const chartTab = h('button', { type: 'button', role: 'tab', class: 'tab', 'aria-selected': 'false' }, 'Chart');
  const csvButton = h('button', { type: 'button', class: 'secondary small', disabled: true }, 'Download CSV');
  const jsonButton = h('button', { type: 'button', class: 'secondary small', disabled: true }, 'Download JSON');
  const output = h('div', { class: 'sql-output' }, notice('info', 'Run a statement to see its result', 'FROM events reads this workspace. Ctrl+Enter (⌘+Enter on a Mac) runs it.'));
  const historyList = h('ol', { class: 'history-list' });
  root.append(
    h('div', { class: 'page-header' }, h('h1', {}, 'SQL'), h('a', { href: 'https://clickhouse.com/docs/sql-reference', class: 'muted small-link', target: '_blank', rel: 'noopener' }, 'ClickHouse SQL reference ↗')),
    h(
      'div',
      { class: 'sql-layout' },
      h(
        'div',
        { class: 'sql-main' },
        editorBox,
        h('div', { class: 'toolbar' }, runButton, saveButton, status, h('span', { class: 'spacer' }), h('div', { role: 'tablist', class: 'tabs' }, tableTab, chartTab), csvButton, jsonButton),
        output,
      ),
      h('aside', { class: 'history', 'aria-label': 'Recent statements' }, h('h2', {}, 'Recent'), historyList),
    ),
  );

  let rows: Row[] = [];
  let view: 'table' | 'chart' = 'table';
  let running: AbortController | undefined;
  const history = readHistory(workspaceId);
  const editor = sqlEditor(editorBox, history[0]?.sql ?? FIRST_STATEMENT, () => void run());

  const drawHistory = (entries: HistoryEntry[]) => {
    historyList.replaceChildren(
      ...(entries.length === 0
        ? [h('li', { class: 'muted' }, 'Statements you run appear here.')]
        : entries.map((e) => {
            // The text is clamped to whole lines by CSS (a button's own box cannot clamp).
            const button = h('button', { type: 'button', class: 'history-entry', title: e.sql }, h('span', { class: 'history-sql' }, e.sql));
            button.addEventListener('click', () => {
              editor.setText(e.sql);
              editor.view.focus();
            });
            return h('li', {}, button);
          })),
    );
  };
  const drawResult = () => {
    const columns = columnsOf(rows);
    if (rows.length === 0) output.replaceChildren(notice('empty', 'The statement returned no rows'));
    else output.replaceChildren(view === 'table' ? virtualTable({ columns, rows }) : resultChart(columns, rows));
  };
  const select = (next: 'table' | 'chart') => {
    view = next;
    tableTab.setAttribute('aria-selected', String(next === 'table'));
    chartTab.setAttribute('aria-selected', String(next === 'chart'));
    if (rows.length > 0) drawResult();
  };

  async function run(): Promise<void> {
    const statement = editor.take().trim();
    if (!statement) return;
    running?.abort();
    running = new AbortController();
    runButton.disabled = true;
    status.textContent = 'Running…';
    const started = performance.now();
    try {
      const answer = await api<QueriesResult>('POST', '/queries', { queries: [statement] }, running.signal);
      rows = answer.results[0]?.results ?? [];
      status.textContent = `${formatCount(rows.length)} row${rows.length === 1 ? '' : 's'} in ${Math.round(performance.now() - started)} ms`;
      csvButton.disabled = jsonButton.disabled = rows.length === 0;
      drawHistory(remember(workspaceId, statement));
      drawResult();
    } catch (err) {
      rows = [];
      csvButton.disabled = jsonButton.disabled = true;
      status.textContent = '';
      output.replaceChildren(notice('error', 'The statement failed', describeError(err)));
    } finally {
      runButton.disabled = false;
    }
  }

  runButton.addEventListener('click', () => void run());
  // A statement saved as an insight (kind sql) can be a dashboard's tile.
  saveButton.addEventListener('click', async () => {
    const statement = editor.take().trim();
    if (!statement) return;
    const name = await promptText('Save the statement', 'Name (it can then be added to a dashboard)', '', 'Save');
    if (!name) return;
    try {
      const saved = await api<SavedInsight>('POST', '/insights/saved', { name, kind: 'sql', query: statement });
      status.textContent = `Saved as “${saved.name}”`;
    } catch (err) {
      output.replaceChildren(notice('error', 'The statement was not saved', describeError(err)));
    }
  });
  // `#/sql?saved=<id>` opens a saved statement (from the saved insights or a dashboard's tile).
  const savedId = currentRoute().params.get('saved');
  if (savedId) {
    api<SavedInsight>('GET', `/insights/saved/${encodeURIComponent(savedId)}`).then(
      (saved) => {
        if (saved.kind !== 'sql' || typeof saved.query !== 'string') return;
        editor.setText(saved.query);
        status.textContent = `Opened “${saved.name}”`;
        void run();
      },
      (err) => output.replaceChildren(notice('error', 'The saved statement could not be opened', describeError(err))),
    );
  }
  tableTab.addEventListener('click', () => select('table'));
  chartTab.addEventListener('click', () => select('chart'));
  csvButton.addEventListener('click', () => download('result.csv', 'text/csv', toCsv(columnsOf(rows), rows)));
  jsonButton.addEventListener('click', () => download('result.json', 'application/json', JSON.stringify(rows, null, 2)));
  drawHistory(history);
  loadCompletions().then(
    ({ columns, snippets }) => editor.setCompletions(columns, snippets),
    () => {}, // completions are a help: the editor works without them
  );
  editor.view.focus();
  return () => {
    running?.abort();
    editor.view.destroy();
  };
}
