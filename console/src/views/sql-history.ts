/**
 * Recent statements of a workspace, newest first, in localStorage (statements, never keys), so
 * they outlive the tab as a query editor's history does.
 */
const MAX_ENTRIES = 20;

export interface HistoryEntry {
  sql: string;
  at: string;
}

const item = (workspaceId: string) => `console.sql-history.${workspaceId}`;

export function readHistory(workspaceId: string): HistoryEntry[] {
  try {
    const entries = JSON.parse(localStorage.getItem(item(workspaceId)) ?? '[]') as HistoryEntry[];
    return Array.isArray(entries) ? entries : [];
  } catch {
    return [];
  }
}

export function remember(workspaceId: string, sql: string): HistoryEntry[] {
  const entries = [{ sql, at: new Date().toISOString() }, ...readHistory(workspaceId).filter((e) => e.sql !== sql)].slice(0, MAX_ENTRIES);
  localStorage.setItem(item(workspaceId), JSON.stringify(entries));
  return entries;
}
