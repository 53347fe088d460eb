// The flags headless Chromium needs on this machine (../shared/DESIGN.md): no sandbox as root,
// no GPU, and no background connections, which the closed network would refuse. Playwright gives
// every launch a fresh, empty profile (user data dir) of its own. Shared by harness.mjs and the
// package's browser test (packages/quarry/test/support/chromium.mjs).

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
