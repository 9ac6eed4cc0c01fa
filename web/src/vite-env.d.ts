/// <reference types="vite/client" />

/** The dashboard's version (package.json), sent as the release of client-error reports. */
declare const __APP_VERSION__: string;
