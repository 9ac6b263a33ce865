// The English catalogue imported whole under its own module id, so that the every-page bundle,
// which imports only the launcher's words from `en.json`, does not carry it (see `ui/words.ts`).
declare module '*/en.json?catalogue' {
  const words: import('./ui/words').Catalogue;
  export default words;
}
