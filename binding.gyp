{
  "targets": [
    {
      "target_name": "batch_recv",
      "conditions": [
        ["OS=='linux'", { "sources": ["collector/native/batch-recv.c"], "cflags": ["-O2", "-Wall", "-Wextra"] }, { "type": "none" }]
      ]
    }
  ]
}
