"""Stop words: function words that carry no topic, in English and Ukrainian.

Question words (what, who, how, хто, що…) are included: a question's topic is in its
other words.  "off" is not: it makes the topic of "time off", "day off" and "sign-off".  The lists
are data; ``analyzer`` drops these at index and query time alike.
"""

from __future__ import annotations

ENGLISH = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
down during each either else etc ever every few for from further get gets getting got had hadn't has
hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's
however i i'd i'll i'm i've if in into is isn't it it's its itself just let's like may me might more
most much must mustn't my myself need needs no nor not now of on once only or other ought our ours
ourselves out over own per please same shall shan't she she'd she'll she's should shouldn't so some
such than that that's the their theirs them themselves then there there's these they they'd they'll
they're they've this those though through thus to too under until up upon us very via was wasn't we
we'd we'll we're we've were weren't what what's when when's where where's whether which while who who's
whom whose why why's will with within without won't would wouldn't yet you you'd you'll you're you've
your yours yourself yourselves anyone anything someone something one ones really tell know inside
outside
""".split()
)

UKRAINIAN = frozenset(
    """
а або адже але б би був була були було бути в вам вас весь вже ви він вона вони воно всі все всю вся
де до дуже є ж же з за зі знову і із їй їм їх його її й к кожен кожна кожне коли котрий лише ми мене
мені мій між мною на нам нас наш наша наше наші не неї нею ним них ні ніж о об один однак оскільки
от по при про саме свій своє свої своя себе собі та так також там те тебе ти тим тільки то тобто той
ту тут у уже хоча хто це цей ці ця цього цьому чи чим що щоб як яка який яке які якщо ось які-небудь
я буде будуть може можна треба є ну ось навіть поки після перед під через для від щодо
кожного кожному кожним кожній кожну кожні кожних кожними
скільки чому куди звідки навіщо таке такий така такі якої якого якому якою яку яких якими
має мають маємо маєте маю мав мала мали
""".split()
)

WORDS = ENGLISH | UKRAINIAN

# Stop words that are common acronyms when written in capitals: "IT" (information technology), "US" (the United
# States).  Written so among ordinary words ("Head of IT", "What is IT?", "US citizens") they are index terms,
# lower-cased (``analyzer.capital_acronyms``); a stop word is otherwise never a term, so the term means the acronym.
CAPITAL_ACRONYMS = frozenset({"IT", "US"})

# Words that frame a question rather than name its topic ("the *main* clients", "*current*
# priorities"). They are kept, since they sometimes matter, but weigh less in a query.
FRAMING = frozenset(
    """
main many key current currently latest recent recently new top best highest lowest biggest largest smallest most least
list show give find tell explain describe summary summarize overview info information details detail
regarding related relevant know want need like get make use used using work way thing things kind type
responsible general overall specific exactly actually usually typically normally etc time
possible update status help news everything anything question stuff
choose chose chosen pick picked happen happened happens happening
основний основні головний головні поточний поточні актуальний останній найвищий найбільший список
розкажи покажи інформація деталі
основна основне основних основного головна головне поточна поточне поточних поточного актуальні останні
найвища найвищі найбільші розкажіть покажіть поясни поясніть інформацію знати знаємо знаю знаєте знає відомо
відповідальний відповідальна відповідальні відповідає відповідають
""".split()
)

# Words that can only ask, never name what is asked about: a question of these alone ("update",
# "status?", "any news?", "help me", "що нового?") names no topic (``pipeline.query.no_topic``).  Narrower
# than FRAMING, which also holds words that name a topic on their own ("time", "work", "key", "type").
VAGUE = frozenset(
    """
update updates status help news everything anything something question stuff info information details detail
summary summarize overview explain describe tell show know latest new recent more
статус оновлення новини новина новий нове нового допомога допоможіть допоможи допомогти інформація деталі
щось питання розкажи покажи поясни підсумок
""".split()
)
