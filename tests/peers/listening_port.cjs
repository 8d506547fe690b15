// Preloaded into a Node HTTP server by the tests (`node --require listening_port.cjs
// server.js`), so that a server started with PORT=0 says which port the kernel gave it:
// once a socket of the process listens, it prints `bound to port N` on stderr. The tests
// wait for that line instead of picking a free port first (which races with anything
// else that binds one in between). The server itself is not changed.
'use strict';

const net = require('node:net');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
    this.once('listening', () => {
        const address = this.address();
        if (address && typeof address === 'object') {
            process.stderr.write(`bound to port ${address.port}\n`);
        }
    });
    return listen.apply(this, args);
};
