import { chromium } from '@playwright/test';
const base = process.env.BASE ?? 'http://127.0.0.1:3420';
const [,, ...paths] = process.argv;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') console.log('console:', m.type(), m.text().slice(0, 300)); });
page.on('pageerror', (e) => console.log('pageerror:', e.message));
for (const p of paths) {
  const [path, name] = p.split('|');
  await page.goto(base + path, { waitUntil: 'networkidle' });
  await page.waitForTimeout(500);
  await page.screenshot({ path: `/tmp/scratch/${name}.png`, fullPage: true });
  console.log('shot', path, name);
}
await browser.close();
