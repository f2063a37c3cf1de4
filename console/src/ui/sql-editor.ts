import { autocompletion, closeBrackets, closeBracketsKeymap, closeCompletion, completionKeymap, type Completion } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { sql } from '@codemirror/lang-sql';
import { bracketMatching, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { Compartment, EditorState, Prec } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, keymap, lineNumbers, placeholder } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { ClickHouse } from './clickhouse-dialect';

/** Colours from the page's CSS variables, so the editor follows the light or dark theme. */
const highlight = HighlightStyle.define([
  { tag: tags.keyword, color: 'var(--code-keyword)', fontWeight: '600' },
  { tag: [tags.string, tags.special(tags.string)], color: 'var(--code-string)' },
  { tag: [tags.number, tags.bool, tags.null], color: 'var(--code-number)' },
  { tag: [tags.typeName, tags.standard(tags.name)], color: 'var(--code-builtin)' },
  { tag: tags.comment, color: 'var(--muted)', fontStyle: 'italic' },
  { tag: [tags.operator, tags.punctuation], color: 'var(--text-2)' },
]);

const theme = EditorView.theme({
  '&': { backgroundColor: 'var(--surface)', color: 'var(--text)', fontSize: '14px', height: '100%' },
  '.cm-content': { fontFamily: 'var(--mono)', caretColor: 'var(--accent)', padding: '8px 0' },
  '.cm-gutters': { backgroundColor: 'var(--surface-2)', color: 'var(--muted)', border: 'none' },
  '.cm-activeLine': { backgroundColor: 'var(--row-hover)' },
  '&.cm-focused': { outline: 'none' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': { backgroundColor: 'var(--selection)' },
  '.cm-tooltip': { backgroundColor: 'var(--surface)', border: '1px solid var(--border)', color: 'var(--text)' },
  '.cm-tooltip-autocomplete ul li[aria-selected]': { backgroundColor: 'var(--accent)', color: 'var(--on-accent)' },
});

export interface SqlEditor {
  view: EditorView;
  /** The statement, with the completion list closed: it would cover the result. */
  take(): string;
  setText(text: string): void;
  /** New completions: the workspace's columns (with their types) and JSON keys. */
  setCompletions(columns: Completion[], snippets: Completion[]): void;
}

/**
 * The SQL editor: ClickHouse highlighting and completions; Ctrl/Cmd+Enter calls `run`. It lives
 * in a shadow root: there CodeMirror adds its styles as a constructed stylesheet, where in the
 * document it would add a <style> element, which the console's Content-Security-Policy refuses.
 */
export function sqlEditor(host: HTMLElement, initial: string, run: () => void): SqlEditor {
  const shadow = host.attachShadow({ mode: 'open' });
  const parent = document.createElement('div');
  parent.style.height = '100%';
  shadow.append(parent);
  const language = new Compartment();
  const extra = new Compartment();
  const languageFor = (columns: Completion[]) => sql({ dialect: ClickHouse, schema: { events: columns }, defaultTable: 'events', upperCaseKeywords: true });
  const view = new EditorView({
    parent,
    root: shadow,
    state: EditorState.create({
      doc: initial,
      extensions: [
        lineNumbers(),
        history(),
        drawSelection(),
        highlightActiveLine(),
        bracketMatching(),
        closeBrackets(),
        autocompletion(),
        placeholder('SELECT event, count() AS n FROM events GROUP BY event ORDER BY n DESC'),
        syntaxHighlighting(highlight),
        theme,
        language.of(languageFor([])),
        extra.of([]),
        Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => (run(), true) }])),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap]),
        EditorView.contentAttributes.of({ 'aria-label': 'SQL statement' }),
        // A long line wraps: opened, it would otherwise show scrolled to wherever the cursor is.
        EditorView.lineWrapping,
      ],
    }),
  });
  return {
    view,
    take: () => {
      closeCompletion(view);
      return view.state.doc.toString();
    },
    setText: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, selection: { anchor: 0 }, scrollIntoView: true }),
    setCompletions: (columns, snippets) =>
      view.dispatch({
        effects: [
          language.reconfigure(languageFor(columns)),
          extra.reconfigure(ClickHouse.language.data.of({ autocomplete: snippets })),
        ],
      }),
  };
}
