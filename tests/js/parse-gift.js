// Parse a GIFT file with gift-pegjs and print its JSON; exit 1 with the location on a syntax error.
const fs = require('fs');
const { parse } = require('gift-pegjs');
try {
  console.log(JSON.stringify(parse(fs.readFileSync(process.argv[2], 'utf8'))));
} catch (e) {
  console.error('SYNTAX ERROR', e.message, JSON.stringify(e.location));
  process.exit(1);
}
