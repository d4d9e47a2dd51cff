"""How vLLM's own renderer and parsers differ from toolwire on the same requests and outputs, through the server
(test_vllm_serving_own.py), per family: class -> count (render, derender), and what a client of vLLM's own parser
sees for the fail-closed cases. docs/engines.md ("vLLM's own renderer and parsers, through the server") explains
each class; a difference that appears or goes away fails the test."""

OWN_RENDER: dict[str, dict[str, int]] = {'deepseek_r1': {'refused (BadRequestError)': 24},
 'deepseek_v31': {},
 'deepseek_v32': {'marker in request text': 2, 'other text': 10},
 'deepseek_v4': {'marker in request text': 2},
 'qwen25': {'marker in request text': 2, 'template text is a control token': 22},
 'qwen3': {'marker in request text': 6},
 'qwen35': {'marker in request text': 6},
 'qwen36': {'marker in request text': 6},
 'qwen3_coder': {'marker in request text': 3},
 'qwen3_instruct_2507': {'marker in request text': 3},
 'qwen3_thinking_2507': {'marker in request text': 3}}

OWN_DERENDER: dict[str, dict[str, int]] = {'deepseek_r1': {'content+reasoning': 2},
 'deepseek_v31': {'error (JSONDecodeError)': 13, 'whole equal, streamed calls': 6},
 'deepseek_v32': {'content': 4},
 'deepseek_v4': {'content': 4},
 'qwen25': {'content': 2},
 'qwen3': {'content': 5, 'content+reasoning': 28},
 'qwen35': {'calls': 1,
            'content+reasoning': 5,
            'reasoning': 23,
            'reasoning+calls': 1,
            'whole equal, streamed content': 2,
            'whole reasoning, streamed content+reasoning': 2},
 'qwen36': {'content+reasoning': 5,
            'reasoning': 24,
            'whole equal, streamed content': 2,
            'whole reasoning, streamed content+reasoning': 2},
 'qwen3_coder': {'calls': 1, 'whole equal, streamed content': 2},
 'qwen3_instruct_2507': {'content': 2},
 'qwen3_thinking_2507': {'content+reasoning': 7, 'whole reasoning, streamed content+reasoning': 24}}

OWN_FAIL_CLOSED: dict[str, dict] = {'deepseek_r1': {"arguments {city: 'Paris'} (not JSON)": {'non-streamed': "called get_weather {city: 'Paris'}, "
                                                                          'finish tool_calls',
                                                          'streamed 1': "called get_weather {city: 'Paris'}, "
                                                                        'finish tool_calls'},
                 'cut off inside the arguments': {'non-streamed': 'no call, text in content, finish length',
                                                  'streamed 1': 'called get_weather {"city": "Par, finish '
                                                                'length'},
                 'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, finish '
                                                             'tool_calls',
                                             'streamed 1': 'called get_wether {"city": "Paris"}, finish '
                                                           'tool_calls'}},
 'deepseek_v31': {"arguments {city: 'Paris'} (not JSON)": {'non-streamed': 'called get_weather {city: '
                                                                           "'Paris'}, finish tool_calls",
                                                           'streamed 1': "called get_weather {city: 'Paris'}, "
                                                                         'finish tool_calls'},
                  'cut off inside the arguments': {'non-streamed': 'no call, text in content, finish length',
                                                   'streamed 1': 'called get_weather {"city": "Par, finish '
                                                                 'length'},
                  'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, finish '
                                                              'tool_calls',
                                              'streamed 1': 'called get_wether {"city": "Paris"}, finish '
                                                            'tool_calls'}},
 'deepseek_v32': {'cut off inside the arguments': {'non-streamed': 'called get_weather {}, finish length',
                                                   'streamed 1': 'called get_weather {"city": ", finish '
                                                                 'length'},
                  'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, finish '
                                                              'tool_calls',
                                              'streamed 1': 'called get_wether {"city": "Paris"}, finish '
                                                            'tool_calls'}},
 'deepseek_v4': {'cut off inside the arguments': {'non-streamed': 'called get_weather {}, finish length',
                                                  'streamed 1': 'called get_weather {"city": ", finish length'},
                 'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, finish '
                                                             'tool_calls',
                                             'streamed 1': 'called get_wether {"city": "Paris"}, finish '
                                                           'tool_calls'}},
 'qwen25': {"arguments {city: 'Paris'} (not JSON)": {'non-streamed': 'no call, text in content, finish stop',
                                                     'streamed 1': "called get_weather {city: 'Paris'}}, "
                                                                   'finish tool_calls'},
            'cut off inside the arguments': {'non-streamed': 'no call, text in content, finish length',
                                             'streamed 1': 'called get_weather {"city": "Par, finish length'},
            'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, finish '
                                                        'tool_calls',
                                        'streamed 1': 'called get_wether {"city": "Paris"}, finish '
                                                      'tool_calls'}},
 'qwen3': {"arguments {city: 'Paris'} (not JSON)": {'non-streamed': 'no call, text in content, finish stop',
                                                    'streamed 1': "called get_weather {city: 'Paris'}}, finish "
                                                                  'tool_calls'},
           'cut off inside the arguments': {'non-streamed': 'no call, text in content, finish length',
                                            'streamed 1': 'called get_weather {"city": "Par, finish length'},
           'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, finish tool_calls',
                                       'streamed 1': 'called get_wether {"city": "Paris"}, finish tool_calls'}},
 'qwen35': {'cut off inside the arguments': {'non-streamed': 'called get_weather {}, finish length',
                                             'streamed 1': 'called get_weather {"city": "Par, finish length'},
            'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, finish '
                                                        'tool_calls',
                                        'streamed 1': 'called get_wether {"city": "Paris"}, finish '
                                                      'tool_calls'}},
 'qwen36': {'cut off inside the arguments': {'non-streamed': 'called get_weather {}, finish length',
                                             'streamed 1': 'called get_weather {"city": "Par, finish length'},
            'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, finish '
                                                        'tool_calls',
                                        'streamed 1': 'called get_wether {"city": "Paris"}, finish '
                                                      'tool_calls'}},
 'qwen3_coder': {'cut off inside the arguments': {'non-streamed': 'called get_weather {}, finish length',
                                                  'streamed 1': 'called get_weather {"city": "Par, finish '
                                                                'length'},
                 'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, finish '
                                                             'tool_calls',
                                             'streamed 1': 'called get_wether {"city": "Paris"}, finish '
                                                           'tool_calls'}},
 'qwen3_instruct_2507': {"arguments {city: 'Paris'} (not JSON)": {'non-streamed': 'no call, text in content, '
                                                                                  'finish stop',
                                                                  'streamed 1': 'called get_weather {city: '
                                                                                "'Paris'}}, finish tool_calls"},
                         'cut off inside the arguments': {'non-streamed': 'no call, text in content, finish '
                                                                          'length',
                                                          'streamed 1': 'called get_weather {"city": "Par, '
                                                                        'finish length'},
                         'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, '
                                                                     'finish tool_calls',
                                                     'streamed 1': 'called get_wether {"city": "Paris"}, '
                                                                   'finish tool_calls'}},
 'qwen3_thinking_2507': {"arguments {city: 'Paris'} (not JSON)": {'non-streamed': 'no call, text in content, '
                                                                                  'finish stop',
                                                                  'streamed 1': 'called get_weather {city: '
                                                                                "'Paris'}}, finish tool_calls"},
                         'cut off inside the arguments': {'non-streamed': 'no call, text in content, finish '
                                                                          'length',
                                                          'streamed 1': 'called get_weather {"city": "Par, '
                                                                        'finish length'},
                         'unknown tool get_wether': {'non-streamed': 'called get_wether {"city": "Paris"}, '
                                                                     'finish tool_calls',
                                                     'streamed 1': 'called get_wether {"city": "Paris"}, '
                                                                   'finish tool_calls'}}}
