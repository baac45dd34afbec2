# report.html.j2 sha256=3a9f631774b0779b322e3d6c76583aa3dd599d4a80258cd8df2ce05fcef2ff09 jinja=3.1.6 options=cca76eb2beab520b
# fmt: off
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'report.html.j2'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_bank = resolve('bank')
    l_0_students = resolve('students')
    l_0_stats = resolve('stats')
    l_0_rejected_rows = resolve('rejected_rows')
    l_0_ignored_columns = resolve('ignored_columns')
    l_0_first = resolve('first')
    l_0_warnings = resolve('warnings')
    l_0_silent = resolve('silent')
    l_0_non_answers = resolve('non_answers')
    l_0_notes = resolve('notes')
    l_0_test = resolve('test')
    l_0_histogram = resolve('histogram')
    l_0_scatter = resolve('scatter')
    l_0_pending = resolve('pending')
    l_0_flagged = resolve('flagged')
    l_0_option_questions = resolve('option_questions')
    l_0_pick_questions = resolve('pick_questions')
    l_0_wrong_questions = resolve('wrong_questions')
    l_0_review = resolve('review')
    l_0_tag_rows = resolve('tag_rows')
    l_0_questions = resolve('questions')
    try:
        t_1 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_2 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_3 = environment.filters['list']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'list' found.")
    try:
        t_4 = environment.filters['map']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'map' found.")
    try:
        t_5 = environment.filters['max']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'max' found.")
    try:
        t_6 = environment.filters['min']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'min' found.")
    try:
        t_7 = environment.filters['pct']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'pct' found.")
    try:
        t_8 = environment.filters['replace']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No filter named 'replace' found.")
    try:
        t_9 = environment.filters['selectattr']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No filter named 'selectattr' found.")
    try:
        t_10 = environment.filters['sum']
    except KeyError:
        @internalcode
        def t_10(*unused):
            raise TemplateRuntimeError("No filter named 'sum' found.")
    try:
        t_11 = environment.filters['unique']
    except KeyError:
        @internalcode
        def t_11(*unused):
            raise TemplateRuntimeError("No filter named 'unique' found.")
    try:
        t_12 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_12(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>'
    yield escape(environment.finalize(environment.getattr((undefined(name='bank') if l_0_bank is missing else l_0_bank), 'title')))
    yield ': grading report</title>\n<style>\nbody { font-family: system-ui, sans-serif; max-width: 70rem; margin: 2rem auto; padding: 0 1rem; color: #222; }\ntable { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }\nth, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }\ntd.num { text-align: right; font-variant-numeric: tabular-nums; }\ntr.flagged td { background: #fdecea; }\ntr.pending td { background: #fdf6e3; }\ntable.items { font-size: 0.8rem; }\ntable.items th { vertical-align: bottom; }\ntable.items td:first-child { overflow-wrap: anywhere; }\ntr.key td { font-weight: 600; }\n.note { color: #555; font-size: 0.85rem; }\n.warning { border: 2px solid #d62728; background: #fdecea; padding: 0.25rem 1rem; margin: 1rem 0; }\n.first { border: 2px solid #e5a50a; background: #fdf6e3; padding: 0.25rem 1rem; margin: 1rem 0; }\ndetails summary { cursor: pointer; }\nfigure { display: inline-block; margin: 0 1rem 1rem 0; }\n.question { border-top: 1px solid #ddd; padding: 0.25rem 0 0.5rem; }\n.question h3 { margin: 0.5rem 0 0.25rem; font-size: 1rem; }\n.question img { max-width: 100%; height: auto; }\n.question ul.choices { list-style: none; padding-left: 0.5rem; }\n.question blockquote { font-style: italic; border-left: 3px solid #ccc; margin: 0.25rem 0; padding-left: 0.75rem; }\n</style>\n</head>\n<body>\n<h1>'
    yield escape(environment.finalize(environment.getattr((undefined(name='bank') if l_0_bank is missing else l_0_bank), 'title')))
    yield ': grading report</h1>\n<p>'
    yield escape(environment.finalize((undefined(name='students') if l_0_students is missing else l_0_students)))
    yield ' students graded on '
    yield escape(environment.finalize(t_2(environment.getattr((undefined(name='stats') if l_0_stats is missing else l_0_stats), 'items'))))
    yield ' answer slots (bank <code>'
    yield escape(environment.finalize(environment.getattr((undefined(name='bank') if l_0_bank is missing else l_0_bank), 'bank')))
    yield '</code>, version '
    yield escape(environment.finalize(environment.getattr((undefined(name='bank') if l_0_bank is missing else l_0_bank), 'version')))
    yield ').\n'
    if (undefined(name='rejected_rows') if l_0_rejected_rows is missing else l_0_rejected_rows):
        pass
        yield '<strong>'
        yield escape(environment.finalize((undefined(name='rejected_rows') if l_0_rejected_rows is missing else l_0_rejected_rows)))
        yield ' '
        yield escape(environment.finalize(('row' if ((undefined(name='rejected_rows') if l_0_rejected_rows is missing else l_0_rejected_rows) == 1) else 'rows')))
        yield ' rejected</strong>.'
    else:
        pass
        yield 'No rows rejected.'
    if (undefined(name='ignored_columns') if l_0_ignored_columns is missing else l_0_ignored_columns):
        pass
        yield '<strong>'
        yield escape(environment.finalize((undefined(name='ignored_columns') if l_0_ignored_columns is missing else l_0_ignored_columns)))
        yield ' '
        yield escape(environment.finalize(('column' if ((undefined(name='ignored_columns') if l_0_ignored_columns is missing else l_0_ignored_columns) == 1) else 'columns')))
        yield ' ignored</strong>.'
    if ((undefined(name='rejected_rows') if l_0_rejected_rows is missing else l_0_rejected_rows) or (undefined(name='ignored_columns') if l_0_ignored_columns is missing else l_0_ignored_columns)):
        pass
        yield 'See <code>rejected.csv</code>.'
    yield '</p>\n'
    if (undefined(name='first') if l_0_first is missing else l_0_first):
        pass
        yield '<div class="'
        yield escape(environment.finalize(('warning' if (undefined(name='warnings') if l_0_warnings is missing else l_0_warnings) else 'first')))
        yield '" id="check-first">\n<h2>'
        yield escape(environment.finalize(('Check these before you trust the grades' if (undefined(name='warnings') if l_0_warnings is missing else l_0_warnings) else 'What to check first')))
        yield '</h2>\n<ol>\n'
        for l_1_line in (undefined(name='first') if l_0_first is missing else l_0_first):
            _loop_vars = {}
            pass
            yield '<li>'
            yield escape(environment.finalize(l_1_line))
            yield '</li>\n'
        l_1_line = missing
        yield '</ol>\n</div>\n'
    else:
        pass
        yield '<p id="check-first">Nothing to check first: every row was graded, every answer was read, and no item is flagged.</p>\n'
    if (undefined(name='silent') if l_0_silent is missing else l_0_silent):
        pass
        yield '<p id="silent">'
        yield escape(environment.finalize((undefined(name='silent') if l_0_silent is missing else l_0_silent)))
        yield '.</p>\n'
    if (undefined(name='non_answers') if l_0_non_answers is missing else l_0_non_answers):
        pass
        yield '<p id="non-answers">'
        yield escape(environment.finalize((undefined(name='non_answers') if l_0_non_answers is missing else l_0_non_answers)))
        yield '.</p>\n'
    if (undefined(name='notes') if l_0_notes is missing else l_0_notes):
        pass
        yield '<p class="note">'
        yield escape(environment.finalize(t_1(context.eval_ctx, (undefined(name='notes') if l_0_notes is missing else l_0_notes), '; ')))
        yield '.</p>\n'
    yield '\n<h2>Test</h2>\n<table>\n<tr><th>Mean</th><td class="num">'
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'mean'), 2)))
    yield ' / '
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'max_score'), 2)))
    yield '</td>\n<th>Median</th><td class="num">'
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'median'), 2)))
    yield '</td>\n<th>SD</th><td class="num">'
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'sd'), 2)))
    yield '</td></tr>\n<tr><th>Skewness</th><td class="num">'
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'skewness'), 3)))
    yield '</td>\n<th>Kurtosis (excess)</th><td class="num">'
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'kurtosis'), 3)))
    yield '</td>\n<th>Cronbach\'s α (CIC)</th><td class="num">'
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'cic'), 1)))
    yield '%</td></tr>\n<tr><th>Error ratio</th><td class="num">'
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'error_ratio'), 1)))
    yield '%</td>\n<th>Standard error</th><td class="num">'
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'standard_error'), 2)))
    yield '</td>\n<th>Score groups</th><td>top 27%: total ≥ '
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'upper_bound'), 2)))
    yield '; bottom 27%: total &lt; '
    yield escape(environment.finalize(t_7(environment.getattr((undefined(name='test') if l_0_test is missing else l_0_test), 'lower_bound'), 2)))
    yield '</td></tr>\n</table>\n<p class="note">Conventions: Moodle\'s quiz statistics (sample variances, ÷ s − 1; skewness k3/k2<sup>3/2</sup>; excess kurtosis\nk4/k2²; CIC = Cronbach\'s α, equal to KR-20 for right/wrong items; error ratio = √(1 − α); standard error = error ratio × SD).\nMoodleDocs call CIC above 75% satisfactory and below 64% unsatisfactory.</p>\n\n<figure>'
    yield escape(environment.finalize((undefined(name='histogram') if l_0_histogram is missing else l_0_histogram)))
    yield '<figcaption>Distribution of total scores</figcaption></figure>\n<figure>'
    yield escape(environment.finalize((undefined(name='scatter') if l_0_scatter is missing else l_0_scatter)))
    yield '<figcaption>Facility against discrimination (flagged items in red)</figcaption></figure>\n\n'
    if (undefined(name='pending') if l_0_pending is missing else l_0_pending):
        pass
        yield '<h2>Pending review</h2>\n<p class="note">These items\' scores wait on your decisions in <code>review.csv</code>, not on the items themselves.</p>\n<ul id="pending">\n'
        for l_1_item in (undefined(name='pending') if l_0_pending is missing else l_0_pending):
            _loop_vars = {}
            pass
            yield '<li><strong>'
            yield escape(environment.finalize(environment.getattr(l_1_item, 'question')))
            yield '</strong>: '
            yield escape(environment.finalize(environment.getattr(l_1_item, 'pending')))
            yield '.</li>\n'
        l_1_item = missing
        yield '</ul>\n'
    yield '\n<h2>Items to look at</h2>\n'
    if (undefined(name='flagged') if l_0_flagged is missing else l_0_flagged):
        pass
        yield '<ul>\n'
        for l_1_item in (undefined(name='flagged') if l_0_flagged is missing else l_0_flagged):
            _loop_vars = {}
            pass
            yield '<li><strong>'
            yield escape(environment.finalize(environment.getattr(l_1_item, 'question')))
            yield '</strong>: '
            yield escape(environment.finalize(t_1(context.eval_ctx, environment.getattr(l_1_item, 'flags'), '; ')))
            yield '.</li>\n'
        l_1_item = missing
        yield '</ul>\n'
    else:
        pass
        yield '<p>No item is flagged.</p>\n'
    yield '\n<h2>Items</h2>\n<table class="items">\n<tr><th>Question</th><th>Type</th><th>Max</th><th>Blank</th><th>Unreadable</th><th>Pending review</th><th>Facility %</th><th>SD %</th><th>Random guess %</th><th>Intended weight %</th>\n<th>Effective weight %</th><th>Discrimination %</th><th>Discriminative efficiency %</th><th>Point-biserial</th></tr>\n'
    for l_1_i in environment.getattr((undefined(name='stats') if l_0_stats is missing else l_0_stats), 'items'):
        _loop_vars = {}
        pass
        yield '<tr'
        if environment.getattr(l_1_i, 'flags'):
            pass
            yield ' class="flagged"'
        elif environment.getattr(l_1_i, 'pending'):
            pass
            yield ' class="pending"'
        yield '><td>'
        yield escape(environment.finalize(environment.getattr(l_1_i, 'question')))
        yield '</td><td>'
        yield escape(environment.finalize(t_8(context.eval_ctx, environment.getattr(l_1_i, 'type'), '_', ' ')))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_7(environment.getattr(l_1_i, 'max_score'), 2)))
        yield '</td>\n<td class="num">'
        yield escape(environment.finalize(environment.getattr(l_1_i, 'blank')))
        yield '</td><td class="num"'
        if environment.getattr(l_1_i, 'cause'):
            pass
            yield ' title="most '
            yield escape(environment.finalize(environment.getattr(l_1_i, 'cause')))
            yield '"'
        yield '>'
        yield escape(environment.finalize(environment.getattr(l_1_i, 'unreadable')))
        yield '</td>\n<td class="num">'
        yield escape(environment.finalize((environment.getattr(l_1_i, 'unreadable') - environment.getattr(l_1_i, 'decided'))))
        yield '</td>\n<td class="num">'
        yield escape(environment.finalize(t_7(environment.getattr(l_1_i, 'facility'), 1)))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_7(environment.getattr(l_1_i, 'sd'), 1)))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_7(environment.getattr(l_1_i, 'random_guess'), 1)))
        yield '</td>\n<td class="num">'
        yield escape(environment.finalize(t_7(environment.getattr(l_1_i, 'intended_weight'), 1)))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_7(environment.getattr(l_1_i, 'effective_weight'), 1)))
        yield '</td>\n<td class="num">'
        yield escape(environment.finalize(t_7(environment.getattr(l_1_i, 'discrimination'), 1)))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_7(environment.getattr(l_1_i, 'efficiency'), 1)))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_7(environment.getattr(l_1_i, 'pbis'), 3)))
        yield '</td></tr>\n'
    l_1_i = missing
    yield '</table>\n<p class="note">Facility, SD, random guess score, intended and effective weight, discrimination index and discriminative efficiency follow\nMoodle\'s definitions: the discrimination index is the correlation of the item\'s mark with the <em>rest</em> of the test (the item left out),\n×100; discriminative efficiency divides that covariance by the largest the two distributions allow; effective weight uses the covariance\nwith the total ("–" when it is negative). The point-biserial is the item–<em>total</em> correlation (the item included), Canvas\'s convention.\nBlank counts students who gave no answer; unreadable, answers that could not be read (they score 0 unless decided in\n<code>review.csv</code>; facility counts them as 0); pending review, those still awaiting your decision. An item is pending review (yellow) when 5% of its answers (and at least 2) could not be read and await a decision: its figures may change once you decide them.\nAn item is flagged (red) for its own quality: the discrimination index is negative, the discriminative efficiency is below 15% (Moodle\'s "dubious"), facility is\nat least 95% or no better than guessing, or a wrong option attracts stronger students.</p>\n\n'
    if (undefined(name='option_questions') if l_0_option_questions is missing else l_0_option_questions):
        pass
        yield '<h2>Distractors</h2>\n<p class="note">Every student is on one row: an option, "(unreadable)" for an answer that names no option, or "(blank)"; the n column adds up\nto the number of students. Per option: share among the students who answered an option (blanks and unreadable answers excluded, as Canvas), mean total score of those who chose it,\nCanvas\'s point-biserial against the total (r<sub>pb</sub> total, population SDs) and against the rest score (r<sub>pb</sub> rest, comparable\nto the discrimination index), and the share of the top and bottom 27% groups (Canvas\'s groups, ties to the higher group) who chose it.</p>\n'
        for l_1_q in (undefined(name='option_questions') if l_0_option_questions is missing else l_0_option_questions):
            _loop_vars = {}
            pass
            yield '<h3>'
            yield escape(environment.finalize(l_1_q))
            yield '</h3>\n<table>\n<tr><th>Option</th><th>Key</th><th>n</th><th>Share %</th><th>Mean total</th><th>r<sub>pb</sub> total</th><th>r<sub>pb</sub> rest</th>\n<th>Top 27% %</th><th>Bottom 27% %</th><th>Flags</th></tr>\n'
            def t_13(fiter):
                for l_2_o in fiter:
                    if (environment.getattr(l_2_o, 'question') == l_1_q):
                        yield l_2_o
            for l_2_o in t_13(environment.getattr((undefined(name='stats') if l_0_stats is missing else l_0_stats), 'options')):
                _loop_vars = {}
                pass
                yield '<tr'
                if environment.getattr(l_2_o, 'is_key'):
                    pass
                    yield ' class="key"'
                elif environment.getattr(l_2_o, 'flags'):
                    pass
                    yield ' class="flagged"'
                yield '><td>'
                yield escape(environment.finalize(environment.getattr(l_2_o, 'option')))
                yield '</td><td>'
                yield escape(environment.finalize(('✓' if environment.getattr(l_2_o, 'is_key') else '')))
                yield '</td>\n<td class="num">'
                yield escape(environment.finalize(environment.getattr(l_2_o, 'n')))
                yield '</td><td class="num">'
                yield escape(environment.finalize(t_7(((environment.getattr(l_2_o, 'prop') * 100) if (not t_12(environment.getattr(l_2_o, 'prop'))) else None), 1)))
                yield '</td>\n<td class="num">'
                yield escape(environment.finalize(t_7(environment.getattr(l_2_o, 'mean_total'), 2)))
                yield '</td><td class="num">'
                yield escape(environment.finalize(t_7(environment.getattr(l_2_o, 'rpb_total'), 3)))
                yield '</td><td class="num">'
                yield escape(environment.finalize(t_7(environment.getattr(l_2_o, 'rpb_rest'), 3)))
                yield '</td>\n<td class="num">'
                yield escape(environment.finalize(t_7(((environment.getattr(l_2_o, 'p_upper') * 100) if (not t_12(environment.getattr(l_2_o, 'p_upper'))) else None), 1)))
                yield '</td>\n<td class="num">'
                yield escape(environment.finalize(t_7(((environment.getattr(l_2_o, 'p_lower') * 100) if (not t_12(environment.getattr(l_2_o, 'p_lower'))) else None), 1)))
                yield '</td><td>'
                yield escape(environment.finalize(t_1(context.eval_ctx, environment.getattr(l_2_o, 'flags'), ', ')))
                yield '</td></tr>\n'
            l_2_o = missing
            yield '<tr><td colspan="2">All students</td><td class="num">'
            yield escape(environment.finalize(context.call(environment.getattr((undefined(name='stats') if l_0_stats is missing else l_0_stats), 'counts'), l_1_q, _loop_vars=_loop_vars)))
            yield '</td><td colspan="7"></td></tr>\n</table>\n'
        l_1_q = missing
    yield '\n'
    if (undefined(name='pick_questions') if l_0_pick_questions is missing else l_0_pick_questions):
        pass
        yield '<h2>Choices of multiple-answer questions</h2>\n<p class="note">Students may pick several choices, so the shares do not add up to 100%: each is the share of the students with a readable\nanswer who picked the choice, overall and in the top and bottom 27% groups. A choice to pick that the top group leaves out, or a wrong one it\npicks, deserves a look.</p>\n'
        for l_1_q in (undefined(name='pick_questions') if l_0_pick_questions is missing else l_0_pick_questions):
            _loop_vars = {}
            pass
            yield '<h3>'
            yield escape(environment.finalize(l_1_q))
            yield '</h3>\n<table>\n<tr><th>Choice</th><th>To pick</th><th>Picked by</th><th>Share %</th><th>Top 27% %</th><th>Bottom 27% %</th></tr>\n'
            def t_14(fiter):
                for l_2_p in fiter:
                    if (environment.getattr(l_2_p, 'question') == l_1_q):
                        yield l_2_p
            for l_2_p in t_14(environment.getattr((undefined(name='stats') if l_0_stats is missing else l_0_stats), 'picks')):
                _loop_vars = {}
                pass
                yield '<tr'
                if environment.getattr(l_2_p, 'is_key'):
                    pass
                    yield ' class="key"'
                yield '><td>'
                yield escape(environment.finalize(environment.getattr(l_2_p, 'option')))
                yield '</td><td>'
                yield escape(environment.finalize(('✓' if environment.getattr(l_2_p, 'is_key') else '')))
                yield '</td><td class="num">'
                yield escape(environment.finalize(environment.getattr(l_2_p, 'n')))
                yield '</td>\n<td class="num">'
                yield escape(environment.finalize(t_7(((environment.getattr(l_2_p, 'prop') * 100) if (not t_12(environment.getattr(l_2_p, 'prop'))) else None), 1)))
                yield '</td>\n<td class="num">'
                yield escape(environment.finalize(t_7(((environment.getattr(l_2_p, 'p_upper') * 100) if (not t_12(environment.getattr(l_2_p, 'p_upper'))) else None), 1)))
                yield '</td>\n<td class="num">'
                yield escape(environment.finalize(t_7(((environment.getattr(l_2_p, 'p_lower') * 100) if (not t_12(environment.getattr(l_2_p, 'p_lower'))) else None), 1)))
                yield '</td></tr>\n'
            l_2_p = missing
            yield '</table>\n'
        l_1_q = missing
    yield '\n'
    if (undefined(name='wrong_questions') if l_0_wrong_questions is missing else l_0_wrong_questions):
        pass
        yield '<h2>Most common wrong answers</h2>\n<p class="note">Per numeric item, the wrong (or partly right) answers given most often, with the known mistake each matched. Where each\nstudent had their own numbers, answers are counted by the mistake they matched.</p>\n'
        for l_1_q in (undefined(name='wrong_questions') if l_0_wrong_questions is missing else l_0_wrong_questions):
            _loop_vars = {}
            pass
            yield '<h3>'
            yield escape(environment.finalize(l_1_q))
            yield '</h3>\n<table>\n<tr><th>Answer</th><th>Known mistake</th><th>Students</th></tr>\n'
            def t_15(fiter):
                for l_2_w in fiter:
                    if (environment.getattr(l_2_w, 'question') == l_1_q):
                        yield l_2_w
            for l_2_w in t_15(environment.getattr((undefined(name='stats') if l_0_stats is missing else l_0_stats), 'wrong')):
                _loop_vars = {}
                pass
                yield '<tr><td>'
                yield escape(environment.finalize((environment.getattr(l_2_w, 'answer') or '(their own numbers)')))
                yield '</td><td>'
                yield escape(environment.finalize((environment.getattr(l_2_w, 'tag') or 'none matched')))
                yield '</td><td class="num">'
                yield escape(environment.finalize(environment.getattr(l_2_w, 'n')))
                yield '</td></tr>\n'
            l_2_w = missing
            yield '</table>\n'
        l_1_q = missing
    yield '\n'
    if (environment.getattr((undefined(name='review') if l_0_review is missing else l_0_review), 'rows') or environment.getattr((undefined(name='review') if l_0_review is missing else l_0_review), 'decided')):
        pass
        yield '<h2>Review</h2>\n<p><code>review.csv</code> lists '
        yield escape(environment.finalize(environment.getattr((undefined(name='review') if l_0_review is missing else l_0_review), 'rows')))
        yield ' distinct '
        yield escape(environment.finalize(('answer' if (environment.getattr((undefined(name='review') if l_0_review is missing else l_0_review), 'rows') == 1) else 'answers')))
        yield ' the machine is not sure of:\n'
        yield escape(environment.finalize(environment.getattr((undefined(name='review') if l_0_review is missing else l_0_review), 'waiting')))
        yield " students' answers await a decision"
        if environment.getattr((undefined(name='review') if l_0_review is missing else l_0_review), 'decided'):
            pass
            yield ', '
            yield escape(environment.finalize(environment.getattr((undefined(name='review') if l_0_review is missing else l_0_review), 'decided')))
            yield ' were scored by a teacher'
        yield '.\nFill in <code>score</code> (and <code>comment</code>) on a row and grade again with <code>--review review.csv</code>: the score applies to\nevery student who gave that answer.</p>\n'
        if environment.getattr((undefined(name='review') if l_0_review is missing else l_0_review), 'agreement'):
            pass
            yield "<table>\n<tr><th>Question</th><th>Answers scored by a teacher</th><th>Same as the rubric %</th><th>Cohen's κ (linear)</th></tr>\n"
            for l_1_a in environment.getattr((undefined(name='review') if l_0_review is missing else l_0_review), 'agreement'):
                _loop_vars = {}
                pass
                yield '<tr><td>'
                yield escape(environment.finalize(environment.getattr(l_1_a, 'question')))
                yield '</td><td class="num">'
                yield escape(environment.finalize(environment.getattr(l_1_a, 'n')))
                yield '</td><td class="num">'
                yield escape(environment.finalize(t_7((environment.getattr(l_1_a, 'same') * 100), 1)))
                yield '</td><td class="num">'
                yield escape(environment.finalize(t_7(environment.getattr(l_1_a, 'kappa'), 2)))
                yield '</td></tr>\n'
            l_1_a = missing
            yield '</table>\n<p class="note">How the rubric\'s suggested scores agree with the teacher\'s on the free-text answers the teacher scored: the share scored the\nsame, and Cohen\'s κ with linear weights over the scores 0, 1, … points (1: full agreement; 0: what chance gives; "–" when undefined, e.g. one\nscore for everything). Low agreement means the rubric\'s phrases miss how students put it.</p>\n'
    yield '\n'
    if (undefined(name='tag_rows') if l_0_tag_rows is missing else l_0_tag_rows):
        pass
        yield '<h2>Misconceptions</h2>\n<p class="note">How many answers matched a mistake or a wrong choice tagged with each misconception, and the share of each score group\n(top, middle, bottom 27%) whose answer to those questions carried the tag (averaged over the questions).</p>\n<table>\n<tr><th>Tag</th><th>Questions</th><th>Answers</th><th>Top %</th><th>Middle %</th><th>Bottom %</th></tr>\n'
        for l_1_t in (undefined(name='tag_rows') if l_0_tag_rows is missing else l_0_tag_rows):
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.finalize(environment.getattr(l_1_t, 'tag')))
            yield '</td><td>'
            yield escape(environment.finalize(environment.getattr(l_1_t, 'questions')))
            yield '</td><td class="num">'
            yield escape(environment.finalize(environment.getattr(l_1_t, 'n')))
            yield '</td>\n<td class="num">'
            yield escape(environment.finalize(t_7(((environment.getattr(l_1_t, 'p_upper') * 100) if (not t_12(environment.getattr(l_1_t, 'p_upper'))) else None), 1)))
            yield '</td>\n<td class="num">'
            yield escape(environment.finalize(t_7(((environment.getattr(l_1_t, 'p_middle') * 100) if (not t_12(environment.getattr(l_1_t, 'p_middle'))) else None), 1)))
            yield '</td>\n<td class="num">'
            yield escape(environment.finalize(t_7(((environment.getattr(l_1_t, 'p_lower') * 100) if (not t_12(environment.getattr(l_1_t, 'p_lower'))) else None), 1)))
            yield '</td></tr>\n'
        l_1_t = missing
        yield '</table>\n'
    yield '\n'
    if environment.getattr((undefined(name='stats') if l_0_stats is missing else l_0_stats), 'variants'):
        pass
        yield '<h2>Difficulty per variant</h2>\n<p class="note">Versions answered by fewer than 5 students share one row: too few to tell one from another. Each question\'s table is folded;\nopen it to compare its versions.</p>\n'
        for l_1_q in t_11(environment, t_4(context, environment.getattr((undefined(name='stats') if l_0_stats is missing else l_0_stats), 'variants'), attribute='question')):
            l_1_rows = missing
            _loop_vars = {}
            pass
            l_1_rows = t_3(context.eval_ctx, t_9(context, environment.getattr((undefined(name='stats') if l_0_stats is missing else l_0_stats), 'variants'), 'question', 'equalto', l_1_q))
            _loop_vars['rows'] = l_1_rows
            yield '<details>\n<summary><strong>'
            yield escape(environment.finalize(l_1_q))
            yield '</strong>: '
            yield escape(environment.finalize(t_10(environment, (undefined(name='rows') if l_1_rows is missing else l_1_rows), attribute='n')))
            yield ' students, '
            yield escape(environment.finalize(t_2((undefined(name='rows') if l_1_rows is missing else l_1_rows))))
            yield ' '
            yield escape(environment.finalize(('row' if (t_2((undefined(name='rows') if l_1_rows is missing else l_1_rows)) == 1) else 'rows')))
            yield '; facility\n'
            yield escape(environment.finalize(t_7(t_6(environment, t_4(context, (undefined(name='rows') if l_1_rows is missing else l_1_rows), attribute='facility')), 1)))
            yield '–'
            yield escape(environment.finalize(t_7(t_5(environment, t_4(context, (undefined(name='rows') if l_1_rows is missing else l_1_rows), attribute='facility')), 1)))
            yield '%</summary>\n<table>\n<tr><th>Variant</th><th>n</th><th>Facility %</th></tr>\n'
            for l_2_v in (undefined(name='rows') if l_1_rows is missing else l_1_rows):
                _loop_vars = {}
                pass
                yield '<tr><td>'
                yield escape(environment.finalize(environment.getattr(l_2_v, 'variant')))
                yield '</td><td class="num">'
                yield escape(environment.finalize(environment.getattr(l_2_v, 'n')))
                yield '</td><td class="num">'
                yield escape(environment.finalize(t_7(environment.getattr(l_2_v, 'facility'), 1)))
                yield '</td></tr>\n'
            l_2_v = missing
            yield '</table>\n</details>\n'
        l_1_q = l_1_rows = missing
    yield '<h2>Questions</h2>\n<p class="note">Each question as students read it; a name in italics stands for a number that varied between students.</p>\n'
    for l_1_q in (undefined(name='questions') if l_0_questions is missing else l_0_questions):
        _loop_vars = {}
        pass
        yield '<section class="question" id="q-'
        yield escape(environment.finalize(environment.getattr(l_1_q, 'id')))
        yield '">\n<h3>'
        yield escape(environment.finalize(environment.getattr(l_1_q, 'id')))
        yield '</h3>\n'
        yield escape(environment.finalize(environment.getattr(l_1_q, 'html')))
        yield '\n</section>\n'
    l_1_q = missing
    yield '</body>\n</html>\n'

blocks = {}
debug_info = '5=105&30=107&31=109&32=117&33=127&34=134&35=138&36=141&37=143&39=145&40=149&47=156&48=159&50=161&51=164&53=166&54=169&59=172&60=176&61=178&62=180&63=182&64=184&65=186&66=188&67=190&73=194&74=196&76=198&80=201&81=205&87=212&89=215&90=219&101=229&102=233&103=246&104=256&105=258&106=264&107=268&119=276&125=279&126=283&130=285&131=293&132=304&133=308&134=314&135=316&137=322&142=326&147=329&148=333&151=335&152=343&153=353&154=355&155=357&161=363&165=366&166=370&169=372&170=380&176=390&178=393&179=397&182=405&185=408&186=412&195=423&201=426&202=430&203=436&204=438&205=440&210=445&214=448&215=452&217=455&218=463&221=467&222=471&230=481&231=485&232=487&233=489'
