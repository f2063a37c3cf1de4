/**
 * Names of well-known referrers, by host (without `www.`), as Plausible's "visit:source" shows
 * them; a host not listed is shown as it is. A suffix rule covers country domains (google.de).
 */
const NAMES: Record<string, string> = {
  'bing.com': 'Bing',
  'duckduckgo.com': 'DuckDuckGo',
  'search.yahoo.com': 'Yahoo!',
  'yandex.ru': 'Yandex',
  'baidu.com': 'Baidu',
  'ecosia.org': 'Ecosia',
  'search.brave.com': 'Brave',
  'facebook.com': 'Facebook',
  'm.facebook.com': 'Facebook',
  'l.facebook.com': 'Facebook',
  'lm.facebook.com': 'Facebook',
  'instagram.com': 'Instagram',
  'l.instagram.com': 'Instagram',
  'twitter.com': 'Twitter',
  't.co': 'Twitter',
  'x.com': 'Twitter',
  'linkedin.com': 'LinkedIn',
  'lnkd.in': 'LinkedIn',
  'reddit.com': 'Reddit',
  'old.reddit.com': 'Reddit',
  'out.reddit.com': 'Reddit',
  'github.com': 'GitHub',
  'news.ycombinator.com': 'Hacker News',
  'youtube.com': 'YouTube',
  'm.youtube.com': 'YouTube',
  'youtu.be': 'YouTube',
  'pinterest.com': 'Pinterest',
  'tiktok.com': 'TikTok',
  'mastodon.social': 'Mastodon',
  'bsky.app': 'Bluesky',
  'chatgpt.com': 'ChatGPT',
  'perplexity.ai': 'Perplexity',
  'producthunt.com': 'Product Hunt',
  'stackoverflow.com': 'Stack Overflow',
  'wikipedia.org': 'Wikipedia',
};

/** Google's search on any of its country domains (google.com, google.co.uk, google.de, …). */
const GOOGLE = /^google\.(?:com?\.)?[a-z]{2,3}$/;

/** The name of a referrer's host (lowercase, without `www.`), or the host itself. */
export function referrerName(host: string): string {
  if (GOOGLE.test(host)) return 'Google';
  if (host.endsWith('.wikipedia.org')) return 'Wikipedia';
  return NAMES[host] ?? host;
}
