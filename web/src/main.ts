// Entry point: builds the App and exposes it as window.__mi for the browser
// tests and the benchmark scripts.

import './style.css';
import { App } from './app';

declare global {
  interface Window { __mi: App }
}

const app = new App();
window.__mi = app;
void app.start().then(() => {
  if (!document.body.dataset.ready) document.body.dataset.ready = '1';
});
