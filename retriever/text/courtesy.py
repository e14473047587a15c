"""Courtesy and reaction vocabulary: the words a chat message uses when it asks for nothing.

Data for triage's low-information gate.  Greetings, thanks, acknowledgements, agreement,
reactions, laughter, apologies, farewells and the fillers and intensifiers that go with them,
in the languages teams write in.  The gate removes these (and stop words) and retrieves when
anything is left, so the lists only need the words of small talk, never topic words: a word
that can name a topic on its own ("holiday", "birthday", "weekend", "day", "team") appears
here only inside a phrase ("happy holidays").

- ``PHRASES``: multi-word expressions for scripts that separate words, matched on word bounds.
- ``UNSPACED``: expressions of scripts written without spaces (Chinese, Japanese, Thai),
  removed wherever they occur.
- ``PARTICLES``: single characters of those scripts that only soften or close a sentence.
- ``WORDS``: single words, lower-case, any script.
- ``ABBREVIATIONS``: chat shorthand for the same ("np", "yw", "brb").
- ``FUNCTION_WORDS``: articles, prepositions and "all/everyone" of languages other than
  English and Ukrainian (whose stop words the analyser already has), for "bonjour à tous".
- ``ADDRESSEES``: words that name who a greeting or thanks is for ("hey team", "thanks all");
  they count as small talk only right after a greeting or thanks.
- ``LAUGHTER`` and ``EMOTICONS``: patterns (regular expressions) of laughter and text faces.
"""

from __future__ import annotations

PHRASES = frozenset(
    """
thank you|thank u|thanks a lot|thanks a bunch|thanks a million|thanks so much|many thanks|much appreciated
good morning|good afternoon|good evening|good night|good day|good job|good work|good stuff|good one
have a nice day|have a good day|have a great day|have a nice weekend|have a good weekend|have a great weekend
nice weekend|good weekend|happy friday|happy monday|happy holidays|happy new year|happy birthday|merry christmas
see you|see ya|see you later|see you soon|see you tomorrow|talk later|talk soon|catch you later|take care
how are you|how are you doing|how's it going|what's up|whats up|how do you do|nice to meet you
got it|get it|i see|i got it|makes sense|that makes sense|sounds good|sounds great|sounds fine|will do|all good
no worries|no problem|no prob|you're welcome|you are welcome|my bad|my pleasure|all set|that's all|that's it
fair enough|of course|for sure|sure thing|okie dokie|oki doki|okey dokey|roger that|right on
never mind|nevermind|not bad|well done|nice one|good to know
that helps|this helps|it helps|very helpful|super helpful|really helpful
spot on|nailed it|you rock|you're a star|you are a star|you're the best|you are the best|you legend|you're a legend
you're a lifesaver|what a lifesaver|great stuff|brilliant stuff|cool stuff|nice stuff|love it|love that|much obliged
exactly what i needed|just what i needed|exactly what i wanted|just what i wanted|what i was looking for
that answers it|that answers my question|answers my question|that was quick|that was fast
good answer|great answer|helpful answer|perfect answer|very helpful answer|really helpful answer|super helpful answer
добрий день|добрий ранок|доброго ранку|добрий вечір|на добраніч|до побачення|до зустрічі|будь ласка|на все добре
доброе утро|добрый день|добрый вечер|спокойной ночи|до свидания|до встречи|не за что|большое спасибо
щиро дякую|дуже дякую|все зрозуміло|все ясно|все понятно|без проблем
buenos días|buenas tardes|buenas noches|muchas gracias|de nada|hasta luego|hasta mañana|qué tal|muy bien
bom dia|boa tarde|boa noite|muito obrigado|muito obrigada|de nada|até logo|até mais|tudo bem|tudo bom
merci beaucoup|bonne journée|bonne soirée|bonne nuit|au revoir|à plus|à bientôt|de rien|ça marche|pas de souci
guten morgen|guten tag|guten abend|gute nacht|vielen dank|danke schön|danke sehr|alles klar|bis später|bis bald
bis dann|kein problem|gern geschehen
grazie mille|va bene|a dopo|a presto|di niente|prego
dank je|dank je wel|dank u|dank u wel|tot ziens|geen probleem
dzień dobry|dobry wieczór|do widzenia|na razie|nie ma sprawy|dziękuję bardzo
dobrý den|na shledanou
tack så mycket|tusen takk|mange tak
teşekkür ederim|çok teşekkürler|günaydın|iyi günler|kolay gelsin
ευχαριστώ πολύ|καλημέρα|καλησπέρα
شكرا جزيلا|صباح الخير|مساء الخير|السلام عليكم|مع السلامة
תודה רבה|בוקר טוב|לילה טוב
theek hai|thik hai|bahut shukriya|bahut dhanyavaad
xin chào|cảm ơn|cám ơn|tạm biệt
terima kasih|selamat pagi|sama sama
asante sana
""".replace("\n", "|").split("|")
) - {""}

UNSPACED = (
    # Chinese
    "谢谢你们",
    "谢谢你",
    "谢谢您",
    "谢谢",
    "多谢",
    "感谢",
    "你们好",
    "你好",
    "您好",
    "大家好",
    "早上好",
    "早安",
    "晚安",
    "再见",
    "好的",
    "收到",
    "明白了",
    "明白",
    "了解了",
    "没问题",
    "没事",
    "不客气",
    "太棒了",
    "不错",
    "有用",
    "辛苦了",
    "哈哈",
    # Japanese
    "ありがとうございました",
    "ありがとうございます",
    "ありがとう",
    "おはようございます",
    "おはよう",
    "こんにちは",
    "こんばんは",
    "おやすみなさい",
    "おつかれさまです",
    "お疲れ様です",
    "お疲れさまです",
    "よろしくお願いします",
    "よろしく",
    "了解です",
    "了解",
    "承知しました",
    "わかりました",
    "なるほど",
    "すごい",
    "いいね",
    "どうも",
    "さようなら",
    "です",
    "ます",
    # Thai
    "สวัสดีครับ",
    "สวัสดีค่ะ",
    "สวัสดี",
    "ขอบคุณมาก",
    "ขอบคุณ",
    "ครับ",
    "ค่ะ",
    "โอเค",
)

PARTICLES = frozenset("了啊呀吧哦的嗯呢嘛哇喔噢哈呵嘻对是好很非常你您们大家ねよなはいうん！")

WORDS = frozenset(
    """
hi hello hey heya hiya hullo howdy yo sup greetings morning afternoon evening night gm gn welcome hola
thanks thank thx thnx thanx thks ty tysm tyvm cheers ta appreciate appreciated appreciation grateful kudos
congrats congratulations bravo
ok okay okey oki okie okey-dokey k kk kay sure yes yeah yea yep yup ya yah aye no nope nah nay
alright aight right fine cool nice great awesome perfect excellent amazing wonderful fantastic brilliant
lovely sweet neat super superb splendid fab fabulous wow whoa woah yay yippee woohoo hooray phew
helpful useful informative interesting clear correct exactly indeed true agreed agree absolutely totally
definitely certainly understood noted done roger ack acknowledged gotcha gotit understand see
sorry apologies pardon oops whoops
bye byebye goodbye goodnight cya later ttyl laters farewell
lol lmao lmfao rofl haha hehe hihi xd omg omfg wtf
hmm hm hmmm uh um umm uhm er erm ah oh ooh aha ahh ugh meh eh mhm uh-huh
very so really much many lot lots bunch tons quite pretty truly such super just still anyway anyways
guys folks everyone everybody all yall y'all mate buddy pal dude bro man fam
please pls plz again too also well then
привіт привітик вітаю здоровенькі здрастуйте дякую дяк дяки дякс дякуємо спасибі вдячний вдячна
ок окей оке добре гаразд зрозуміло зрозумів зрозуміла ясно так ні ага угу авжеж звісно звичайно
бувай бувайте па круто супер чудово клас класно прекрасно відмінно корисно цікаво норм нормально
вибач вибачте перепрошую сорі дуже велике всім усім друзі колеги
привет здравствуйте здрасте спасибо спс благодарю пасиб хорошо понятно понял поняла ладно да нет
пока круто отлично полезно интересно нормально извини извините очень большое всем
gracias vale genial perfecto bueno buena bien claro entendido listo adiós chao saludos excelente
estupendo guay útil muy mil sí oye
olá oi obrigado obrigada valeu beleza certo entendi legal ótimo perfeito tchau show muito sim
salut bonjour bonsoir coucou merci beaucoup d'accord daccord super génial parfait top entendu compris
ciao utile très nickel oui bien
hallo moin servus danke dankeschön toll prima perfekt verstanden genau tschüss hilfreich sehr gut ja
jawohl klar super
grazie perfetto capito ottimo bene arrivederci salve buongiorno buonasera molto sì
hoi bedankt dankjewel oké helder doei nuttig
cześć dzięki dziękuję spoko okej jasne rozumiem świetnie super pa bardzo tak
ahoj díky děkuji
hej hei tack takk bra toppen moi kiitos kiitti
merhaba selam teşekkürler sağol sağolun tamam süper harika
γεια ευχαριστώ εντάξει
مرحبا شكرا شكراً تمام ممتاز حسنا اهلا أهلا
שלום תודה סבבה אחלה
नमस्ते धन्यवाद शुक्रिया ठीक अच्छा है
namaste dhanyavaad dhanyavad shukriya accha acha achha theek thik
vâng dạ tốt tuyệt halo hai makasih oke baik siap mantap sip asante sawa jambo habari
안녕하세요 안녕 감사합니다 고맙습니다 고마워요 고마워 네 예 알겠습니다 알겠어요 좋아요 좋아 최고 대박
hvala zdravo bok pozdrav mulțumesc multumesc mersi bună buna salut köszönöm köszi szia salamat kumusta
ďakujem dakujem ačiū labas paldies sveiki aitäh tere gràcies eskerrik takk dankie ngiyabonga
благодаря здравей мерси ممنون مرسی سلام شکریہ ধন্যবাদ நன்றி მადლობა շնորհակալություն አመሰግናለሁ
""".split()
)

ABBREVIATIONS = frozenset("np nw yw ty tyvm tysm thx brb bbl afk gtg g2g ttyl omw ikr fyi idk ok".split())

FUNCTION_WORDS = frozenset(
    """
à a au aux de du des la le les l' un une et ou pour avec tous toutes tout vous
el los las lo un una y o para por con todos todas a al del
o os as ao aos às um uma e ou para com todos todas
il lo gli i una e o per con tutti tutte
der die das den dem ein eine und oder für mit euch alle allen
het een en voor met iedereen allemaal
i w z na dla wszystkim wszystkich
""".split()
)

ADDRESSEES = frozenset("team crew squad gang colleagues colleague everyone all folks команда колеги всім".split())

LAUGHTER = (
    r"(?:a?h[aeiou]){2,}h?",
    r"l+o+l+[lo]*",
    r"lmf?a+o+",
    r"x+d+",
    r"(?:ja){2,}j?",
    r"(?:je){2,}j?",
    r"k{3,}",
    r"(?:rs){1,}",
    r"(?:х[аеи]){2,}х?",
    r"(?:ах){2,}а?",
    r"[\u314b\u314e\u110f\u1112]{2,}",  # ㅋㅋ/ㅎㅎ, also as NFKC folds them (conjoining jamo)
    r"(?:哈|呵|嘻){2,}",
    r"w{3,}",
    r"5{3,}",
)

EMOTICONS = r"(?<!\w)(?:[:;=8][-'^]?[()\[\]dDpPoO3/\\|*xX]+|<3+|\^[_.-]?\^|[xX][dD]+|\+1|-1)(?!\w)"
