// Convert QTI 2.1 items to QTI 3.0 with @citolab/qti-convert (the converter Citolab ships for
// its own player) and print {file: qti3 xml} as JSON, so the player can score them.
import fs from 'fs';
import { convertQti2toQti3 } from '@citolab/qti-convert/qti-convert-node';

const out = {};
for (const file of process.argv.slice(2)) {
  out[file] = await convertQti2toQti3(fs.readFileSync(file, 'utf8'));
}
console.log(JSON.stringify(out));
