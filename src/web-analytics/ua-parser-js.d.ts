// ua-parser-js 1.x (MIT) ships no types; the part of its API the service uses.
declare module 'ua-parser-js' {
  interface Named {
    name?: string;
    version?: string;
  }
  interface Result {
    browser: Named;
    os: Named;
    device: { type?: string };
  }
  export default class UAParser {
    constructor(userAgent: string);
    getResult(): Result;
  }
}
