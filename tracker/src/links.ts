/** Files whose links count as downloads, by extension. */
const DOWNLOAD = /\.(?:pdf|csv|txt|rtf|docx?|xlsx?|pptx?|odt|ods|zip|gz|tgz|rar|7z|dmg|pkg|exe|msi|iso|mp3|mp4|wav|mov|avi)$/i;

/**
 * Reports clicks on links that leave the site (`Outbound Link: Click`) or fetch a file
 * (`File Download`), with the link's URL, through `track`. Listens in the capture phase, so a
 * page's own handler cannot hide the click.
 */
export function trackLinks(track: (event: string, properties: Record<string, unknown>) => void): void {
  document.addEventListener(
    'click',
    (e) => {
      const link = (e.target as Element | null)?.closest?.('a[href]') as HTMLAnchorElement | null;
      if (!link || !/^https?:$/.test(link.protocol)) return;
      if (link.host !== location.host) track('Outbound Link: Click', { url: link.href });
      else if (DOWNLOAD.test(link.pathname)) track('File Download', { url: link.href });
    },
    true,
  );
}
