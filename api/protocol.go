package api

// Protocol is what this build's workflow input, carry and tree signals
// speak: their fields and what they mean, and the command sequence the
// workflow makes of them. It goes up when a build can no longer replay the
// histories of the one before, or read what it wrote; 0, the field left
// out, is a build from before protocols.
const Protocol = 2
