// The view modules of modes and groups, each registering its views with
// ../views.js; imported once by app.js.
import './extreme.js';
import './assistant.js';
import './voice.js';
import './voicemode.js';
import './groups.js';
