/** Stylesheets imported for the bundler, which emits them as a CSS file of their own. */
declare module '*.css';
