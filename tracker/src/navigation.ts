/**
 * Calls `onChange` after every single-page-app navigation: history.pushState and replaceState
 * (wrapped) and popstate (back and forward). Whether the page really changed is for the caller.
 */
export function onNavigation(onChange: () => void): void {
  for (const name of ['pushState', 'replaceState'] as const) {
    const original = history[name];
    history[name] = function (this: History, ...args: Parameters<History['pushState']>) {
      original.apply(this, args);
      onChange();
    };
  }
  addEventListener('popstate', onChange);
}
