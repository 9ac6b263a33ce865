import type { Surroundings } from './connection';

/** The browser's network and visibility events, as the session client takes them. */
export function browserSurroundings(win: Window = window): Surroundings {
  return {
    online: () => win.navigator.onLine !== false,
    watch(on) {
      const visible = () => win.document.visibilityState === 'visible' && on.visible();
      win.addEventListener('online', on.online);
      win.addEventListener('offline', on.offline);
      win.document.addEventListener('visibilitychange', visible);
      return () => {
        win.removeEventListener('online', on.online);
        win.removeEventListener('offline', on.offline);
        win.document.removeEventListener('visibilitychange', visible);
      };
    },
  };
}
